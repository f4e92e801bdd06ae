// The command boundary is transport-neutral (DESIGN.md section 2): a command
// called directly, with no GraphQL around it, checks its own input and answers
// AppError; and the layers import only downwards.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as orgs from '../src/commands/orgs.ts';
import * as users from '../src/commands/users.ts';
import type { CommandContext } from '../src/commands/context.ts';
import { newCommandContext } from '../src/commands/request-context.ts';
import { AppError } from '../src/errors.ts';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

describe('commands check their own input', () => {
  let gw: TestGateway;
  let ctx: CommandContext;
  beforeAll(async () => {
    gw = await startGateway();
    ctx = newCommandContext(gw.gateway.deps, { callerId: gw.adminId }, null);
  });
  afterAll(async () => gw?.close());

  const failure = async (run: Promise<unknown>) => {
    const err = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  };

  it('an invalid input is INVALID_ARGUMENT listing every violated field, before anything is read or written', async () => {
    const before = (await gw.gateway.deps.store.load<User>('user', gw.adminId))!.sequence;
    const err = await failure(
      users.updateHumanProfile(ctx, { userId: gw.adminId, firstName: '', lastName: 'x'.repeat(201), gender: 'NOPE' }),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
    const fields = err.details.flatMap((d: any) => d.fieldViolations.map((v: any) => v.field)).sort();
    expect(fields).toEqual(['input.firstName', 'input.gender', 'input.lastName']);
    expect((await gw.gateway.deps.store.load<User>('user', gw.adminId))!.sequence).toBe(before);
  });

  it('a value of the wrong type, or no input at all, is INVALID_ARGUMENT too (a transport passes what the client sent)', async () => {
    expect((await failure(orgs.addOrganization(ctx, { name: 42 }))).code).toBe('INVALID_ARGUMENT');
    expect((await failure(users.setHumanPassword(ctx, undefined))).code).toBe('INVALID_ARGUMENT');
  });

  it('a valid input runs the command', async () => {
    const res = await users.addHumanUser(ctx, {
      profile: { firstName: 'Ada', lastName: 'L' },
      email: { email: 'ada-boundary@example.com', returnCode: true },
    });
    expect(res.userId).toMatch(/^\d+$/);
    expect(res.emailCode).toMatch(/^[A-Z0-9]{6}$/);
  });
});

describe('layers import downwards only', () => {
  const src = fileURLToPath(new URL('../src', import.meta.url));
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const importsOf = (file: string) =>
    [...readFileSync(path.join(src, file), 'utf8').matchAll(/^(?:import|export)[^;]*? from '([^']+)'/gm)].map((m) => m[1]!);

  it('nothing outside src/schema imports src/schema, but the server wiring (of both modes)', () => {
    const offenders = files
      .filter((f) => !f.startsWith(`schema${path.sep}`) && f !== 'server.ts' && f !== 'upstream-gateway.ts')
      .filter((f) => importsOf(f).some((i) => /(^|\/)schema\//.test(i)));
    expect(files.length).toBeGreaterThan(50);
    expect(offenders).toEqual([]);
  });

  it('commands and model import no transport and no driver', () => {
    const banned = /^(graphql|graphql-yoga|@pothos\/|@connectrpc\/|mongodb$|ioredis$)/;
    const offenders = files
      .filter((f) => /^(commands|model)\//.test(f))
      .flatMap((f) =>
        importsOf(f)
          .filter((i) => banned.test(i) || /(^|\/)(schema|http)\//.test(i))
          .map((i) => `${f}: ${i}`),
      );
    expect(offenders).toEqual([]);
  });
});
