// Placeholder: honours REDIS_URL / MONGODB_URL only. Starting servers comes next.
import type { TestProject } from 'vitest/node';

export default async function setup(project: TestProject) {
  project.provide('redisUrl', process.env.REDIS_URL ?? '');
  project.provide('mongoUrl', process.env.MONGODB_URL ?? '');
  project.provide('redisProblem', process.env.REDIS_URL ? '' : 'REDIS_URL not set');
  project.provide('mongoProblem', process.env.MONGODB_URL ? '' : 'MONGODB_URL not set');
}
