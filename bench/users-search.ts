// The users search at scale (issue 13), one gateway per store setup: users bulk-loaded
// straight into the store (tools/sqlite-bulk.ts on the embedded store, before the gateway
// opens the folder; tools/mongo-bulk.ts on MongoDB), then in the same gateway
//   users-search  users(first: 50, allOrganizations: true, filter: { email: { op: PREFIX,
//                 value: "grace." } }) { edges { node { id username } } pageInfo { ... } }
//   me            the `me` scenario of bench/scenarios.ts, beside it on the same data,
// each after its warm-up, with the bench's connections and duration, then 200 requests one at
// a time (a request's latency without queueing behind the others). The users are named as
// sqlite-bulk.ts names them (first.last.<tag><i>@bulk.example.com, 16 first names in turn), so
// "grace." matches one user in 16: before the timing, one query with totalCount checks the
// count and the page (50 matching users, hasNextPage).
// On FerretDB (the MongoDB-wire server the bench starts when MONGODB_URL is unset) every search
// scans the collection (no index serves a find in FerretDB v1), so it gets fewer users
// (FERRET_USERS) and its figures are an error check only.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import { createIdGenerator } from '../src/model/ids.ts';
import { bulkLoadUsers as mongoBulkLoad, type BulkUser } from '../tools/mongo-bulk.ts';
import { bulkLoadUsers as sqliteBulkLoad, bulkUser, FIRST } from '../tools/sqlite-bulk.ts';
import type { ServerChoice } from '../test/support/servers-start.ts';
import { formatSummary, summarize } from './cpuprofile-top.ts';
import { round } from './round-trips.ts';
import type { Child, Mark, Measured, StoreKind } from './run.ts';
import { fixed, graphql, OPS, type Load, type ServerKind, type Target } from './scenarios.ts';

/** Users on the embedded store and on a real MongoDB (MONGODB_URL), full run and smoke. */
export const SEARCH_USERS = { full: 100_000, smoke: 10_000 };
/**
 * On FerretDB a search reads and matches every user state document: at 300 users, through
 * the gateway on this shared 2-core machine, p50 0.12 s one at a time and 1.2–1.4 s with 4
 * or 10 connections (about 1,000 users would near autocannon's 10 s timeout). The smoke
 * run's 100 lets a few dozen end within its 2 s. Neither has a second page of matches.
 */
export const FERRET_USERS = { full: 300, smoke: 100 };
/**
 * FerretDB's figures are an error check, so its searches get what they need on any machine:
 * one connection (a search is a scan of one core, and ten queued behind each other passed
 * autocannon's 10 s timeout at load 12 here), a 120 s client timeout and the same read bound
 * in the gateway (MONGODB_READ_TIMEOUT_MS; its 10 s default would answer UNAVAILABLE).
 */
const FERRET_CHECK = { connections: 1, timeoutSeconds: 120 };
export const SEARCH_PREFIX = 'grace.';
/** Requests one at a time after each measurement (on FerretDB 10). */
export const SEQUENTIAL = { full: 200, smoke: 20 };

// As tools/sqlite-bulk.ts names its users (its lists), so one prefix matches the same share on both stores.

/** How many of n bulk-loaded users the prefix matches (user i has the first name FIRST[i % 16]). */
const expectedMatches = (n: number) => {
  const k = FIRST.findIndex((f) => SEARCH_PREFIX.startsWith(`${f.toLowerCase()}.`));
  return n > k ? Math.floor((n - 1 - k) / FIRST.length) + 1 : 0;
};

/** The bench's child-process tools (bench/run.ts). */
export interface Harness {
  startChild(kind: ServerKind, env: Record<string, string>, nodeArgs: string[]): Promise<Child>;
  stopChild(child: Child): Promise<void>;
  mark(child: Child): Promise<Mark>;
  drive(url: string, load: Load, connections: number, duration: number): Promise<Measured>;
  rssSampler(pid: number): { peakMb(): number; stop(): void };
  log(line: string): void;
  opts: { duration: number; warmup: number; connections: number; smoke: boolean; cpuProf: boolean };
  /** The environment every gateway child of the bench gets (NODE_ENV, BCRYPT_COST, no rate limits). */
  env: Record<string, string>;
  /** Unique per bench run: database names. */
  run: string;
}

export interface SearchRow extends Measured {
  scenario: 'users-search' | 'me';
  store: StoreKind;
  users: number;
  cpuMsPerRequest?: number;
  eventLoopDelayMs: Mark['eventLoopDelayMs'];
  /** process.memoryUsage() of the gateway right after the measurement. */
  memoryMb: Mark['memoryMb'];
  /** After the measurement, requests one at a time: their latency without queueing behind the others. */
  oneAtATime: { requests: number; p50: number; p99: number };
}

export interface SearchRun {
  store: StoreKind;
  users: number;
  loadSeconds: number;
  prefix: string;
  /** totalCount of the search, asked once before the timing. */
  matching: number;
  /** What went wrong beside failed requests: the page asked before the timing (count, size, a user not matching, hasNextPage), or a measurement without any answer. */
  problems: string[];
  rows: SearchRow[];
  /** Of the gateway over the whole run (both measurements). */
  peakRssMb: number;
}

const CHECK_QUERY = `query UsersSearchCheck($prefix: String!) {
  users(first: 50, allOrganizations: true, filter: { email: { op: PREFIX, value: $prefix } }) {
    totalCount edges { node { id username email { email } } } pageInfo { hasNextPage endCursor }
  }
}`;

/** n users as tools/sqlite-bulk.ts makes them, for tools/mongo-bulk.ts, spread over 10 organization ids. */
function bulkUsers(n: number, tag: string): BulkUser[] {
  const ids = createIdGenerator({ nodeId: 1022 });
  const orgIds = Array.from({ length: 10 }, () => ids.next());
  return Array.from({ length: n }, (_, i) => {
    return { id: ids.next(), orgId: orgIds[i % orgIds.length]!, user: bulkUser(i, tag) };
  });
}

/** Bulk loads, starts the gateway, checks one page, then measures the search and `me` in it. */
export async function runUsersSearch(
  h: Harness,
  store: StoreKind,
  mongo: ServerChoice | undefined,
  redis: ServerChoice | undefined,
): Promise<SearchRun> {
  const label = `users-search/${store}`;
  const ferret = store === 'mongodb+redis' && !mongo!.how.startsWith('given');
  const users = (ferret ? FERRET_USERS : SEARCH_USERS)[h.opts.smoke ? 'smoke' : 'full'];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-search-'));
  const dbName = `bench_${h.run}_search`;
  const env: Record<string, string> = { ...h.env, DATA_DIR: path.join(dir, 'data') };
  if (store === 'embedded') Object.assign(env, { MONGODB_URL: '', REDIS_URL: '' });
  else Object.assign(env, { MONGODB_URL: mongo!.url, MONGODB_DB: dbName, REDIS_URL: redis!.url });
  if (ferret) env.MONGODB_READ_TIMEOUT_MS = String(FERRET_CHECK.timeoutSeconds * 1000);
  const connections = ferret ? FERRET_CHECK.connections : h.opts.connections;
  const load = (target: Target, query: string, variables?: Record<string, unknown>): Load => {
    const l = fixed(target, query, variables);
    return ferret ? { ...l, options: { ...l.options, timeout: FERRET_CHECK.timeoutSeconds } } : l;
  };

  try {
    h.log(`${label}: bulk-loading ${users} users`);
    const t0 = performance.now();
    if (store === 'embedded') await sqliteBulkLoad({ dataDir: env.DATA_DIR!, users });
    else await mongoBulkLoad({ url: mongo!.url, dbName, users: bulkUsers(users, h.run) });
    const loadSeconds = Math.round((performance.now() - t0) / 100) / 10;
    h.log(`${label}: loaded in ${loadSeconds} s; starting the gateway`);

    // With --cpu-prof: a profile per thread of the gateway's whole life (both measurements), kept in the temp folder.
    const profDir = path.join(os.tmpdir(), `bench-search-${store.replace(/\W/g, '_')}-${h.run}`);
    const child = await h.startChild('gateway', env, h.opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    const rss = h.rssSampler(child.proc.pid!);
    const rows: SearchRow[] = [];
    const problems: string[] = [];
    let matching = 0;
    let peakRssMb = 0;
    try {
      const target: Target = child.target;
      const page = (await graphql(target, CHECK_QUERY, { prefix: SEARCH_PREFIX })).users;
      matching = page.totalCount;
      const emails: string[] = page.edges.map((e: any) => e.node.email.email);
      const expected = expectedMatches(users);
      if (matching !== expected) problems.push(`totalCount ${matching}, expected ${expected}`);
      if (emails.length !== Math.min(50, expected)) problems.push(`${emails.length} users on the page`);
      if (emails.some((e) => !e.startsWith(SEARCH_PREFIX)))
        problems.push(`not matching: ${emails.find((e) => !e.startsWith(SEARCH_PREFIX))}`);
      if (page.pageInfo.hasNextPage !== expected > 50) problems.push(`hasNextPage ${page.pageInfo.hasNextPage}`);
      h.log(
        `${label}: ${matching} of ${users} users match "${SEARCH_PREFIX}"; the first page ${problems.length ? `WRONG: ${problems.join('; ')}` : 'is right'}`,
      );

      const measured: [SearchRow['scenario'], string, Record<string, unknown>?][] = [
        ['users-search', OPS.usersSearch, { prefix: SEARCH_PREFIX }],
        ['me', OPS.me],
      ];
      for (const [scenario, query, variables] of measured) {
        if (h.opts.warmup > 0) await h.drive(target.url, load(target, query, variables), connections, h.opts.warmup);
        h.log(`${label}: ${scenario}, measuring ${h.opts.duration} s, ${connections} connections`);
        const before = await h.mark(child);
        const m = await h.drive(target.url, load(target, query, variables), connections, h.opts.duration);
        const after = await h.mark(child);
        // (On FerretDB a search may outlast a short measurement on a loaded machine; the ten one
        // at a time below are its check that every search is answered.)
        if (m.requests === 0 && !ferret) problems.push(`${scenario}: no answer within ${h.opts.duration} s`);
        // Then one at a time: a request's own latency, without the others' queueing.
        const times: number[] = [];
        for (let i = 0; i < (ferret ? 10 : SEQUENTIAL[h.opts.smoke ? 'smoke' : 'full']); i++) {
          const t = performance.now();
          await graphql(target, query, variables).then(
            () => times.push(performance.now() - t),
            (e) => problems.push(`${scenario} one at a time: ${String(e).slice(0, 300)}`),
          );
        }
        times.sort((a, b) => a - b);
        const at = (q: number) => round(times[Math.max(0, Math.ceil(q * times.length) - 1)] ?? NaN, 1);
        rows.push({
          scenario,
          store,
          users,
          ...m,
          cpuMsPerRequest: m.requests ? round((after.cpuUs - before.cpuUs) / 1000 / m.requests, 3) : undefined,
          eventLoopDelayMs: after.eventLoopDelayMs,
          memoryMb: after.memoryMb,
          oneAtATime: { requests: times.length, p50: at(0.5), p99: at(0.99) },
        });
        h.log(
          `${label}: ${scenario} ${m.rps} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, failures (non-2xx/conn/app) ${m.non2xx}/${m.errors}/${m.graphqlErrors}${m.sample ? `, e.g. ${m.sample}` : ''}; ` +
            `one at a time p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`,
        );
      }
    } finally {
      peakRssMb = rss.peakMb();
      rss.stop();
      await h.stopChild(child);
      if (h.opts.cpuProf) {
        const summaries = readdirSync(profDir)
          .map((f) => summarize(path.join(profDir, f), 15))
          .sort((a, b) => b.busyMs - a.busyMs);
        for (const s of summaries) h.log(`${label}: CPU profile of a gateway thread over the search and me\n${formatSummary(s)}`);
      }
    }
    return { store, users, loadSeconds, prefix: SEARCH_PREFIX, matching, problems, rows, peakRssMb };
  } finally {
    if (store === 'mongodb+redis') {
      const client = new MongoClient(mongo!.url, { serverSelectionTimeoutMS: 5000 });
      await client
        .db(dbName)
        .dropDatabase()
        .catch((e) => h.log(`could not drop ${dbName}: ${e}`));
      await client.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

const num = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));

/** One table for both stores; on FerretDB (not a given MONGODB_URL) requests and failures only. */
export function searchTable(runs: SearchRun[], mongoGiven: boolean): string {
  const head = [
    'scenario',
    'store',
    'users',
    'requests',
    'req/s',
    'p50 ms',
    'p99 ms',
    'failures: non-2xx/conn/app',
    'server CPU ms/req',
    'one at a time: p50 ms',
    'p99 ms',
    'RSS MB after',
    'peak RSS MB',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  for (const run of runs) {
    const speed = run.store === 'embedded' || mongoGiven;
    for (const r of run.rows) {
      lines.push(
        `| ${[
          r.scenario,
          r.store,
          String(r.users),
          String(r.requests),
          speed ? num(r.rps) : 'error check',
          speed ? num(r.p50) : '-',
          speed ? num(r.p99) : '-',
          `${r.non2xx}/${r.errors}/${r.graphqlErrors}`,
          speed ? num(r.cpuMsPerRequest, 2) : '-',
          speed ? num(r.oneAtATime.p50, 1) : '-',
          speed ? num(r.oneAtATime.p99, 1) : '-',
          num(r.memoryMb.rss),
          num(run.peakRssMb),
        ].join(' | ')} |`,
      );
    }
  }
  return lines.join('\n');
}
