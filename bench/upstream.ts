// Upstream mode (ZITADEL_URL), in one run: two real children on loopback, an embedded gateway
// (the upstream, `gateway`) and a gateway in upstream mode in front of it (`gateway-front`,
// ZITADEL_URL = the upstream's origin, gRPC over h2c). Then
//   1. updateHumanProfile three ways, each after its warm-up, with the bench's connections:
//        upstream mode    GraphQL to the front, which calls the upstream's
//                         ManagementService/UpdateHumanProfile over gRPC
//        direct GraphQL   the same mutation to the upstream's own GraphQL face
//        upstream gRPC    ManagementService/UpdateHumanProfile to the upstream's gRPC face
//                         (ghz, bench/ghz-load.ts), the call the front makes
//      req/s and the ratios upstream mode ÷ direct GraphQL and ÷ upstream gRPC, each process's CPU
//      per request and peak RSS. Each row gets at most UPSTREAM_SECONDS (the group stays near
//      30 s in a full run).
//   2. Upstream calls per GraphQL operation: the front's gateway_upstream_duration_seconds_count
//      (every method and code) read from its /metrics before and after a few requests sent one at
//      a time, over the requests answered, by method; each count held to a budget (more fails the
//      bench: a lost batch, e.g. `_entities` reading user by user, shows here first).
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatSummary, summarize } from './cpuprofile-top.ts';
import { findGhz, GHZ_INSTALL } from './ghz-load.ts';
import { round } from './round-trips.ts';
import type { Child, Measured } from './run.ts';
import { makeUsers, OPS, PROFILES, scenarios, uniqueEmail, type Load, type Target } from './scenarios.ts';
import type { Harness } from './users-search.ts';

/** Per row of the throughput part, at most (and warm-up at most), full run and smoke. */
export const UPSTREAM_SECONDS = { full: { duration: 5, warmup: 1.5 }, smoke: { duration: 1, warmup: 0.5 } };
/** Requests one at a time per operation in the calls part. */
const COUNTED = { full: 20, smoke: 8 };
/** The `_entities` page. */
const PAGE = 20;

export interface UpstreamRow extends Measured {
  path: 'upstream mode' | 'direct GraphQL' | 'upstream gRPC';
  what: string;
  /** req/s ÷ the direct GraphQL row's, ÷ the upstream gRPC row's (same run). */
  ratioDirect?: number;
  ratioGrpc?: number;
  /** Server CPU (user + system) per answered request over the measurement: the front (upstream mode only) and the upstream. */
  frontCpuMsPerRequest?: number;
  upstreamCpuMsPerRequest?: number;
  /** Upstream mode only: the front's upstream calls over the measurement ÷ the answers (those in flight at the end count as calls, not answers). */
  upstreamCallsPerRequest?: number;
  check?: Record<string, number>;
}

export interface CallCount {
  operation: string;
  what: string;
  requests: number;
  /** Upstream calls counted by the front's /metrics over those requests, by method (and code when not OK). */
  byMethod: Record<string, number>;
  perRequest: number;
  /** At most this many calls per request. */
  budget: number;
  failures: number;
  sample?: string;
}

export interface UpstreamRun {
  rows: UpstreamRow[];
  calls: CallCount[];
  duration: number;
  warmup: number;
  connections: number;
  peakRssMb: { front: number; upstream: number };
  /** Calls per operation over their budget, and answers that were wrong. */
  problems: string[];
}

/** The front's upstream calls so far, by method (`method code` when the code is not OK). */
async function upstreamCalls(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const calls: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^gateway_upstream_duration_seconds_count\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const method = /method="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    const code = /code="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    const key = code === 'OK' ? method : `${method} ${code}`;
    calls[key] = (calls[key] ?? 0) + Number(m[2]);
  }
  return calls;
}

const since = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
      .filter(([, v]) => v > 0),
  );
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** One GraphQL request with the admin's token and extra headers; the answer's data, or why it failed. */
async function post(target: Target, query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.adminToken}`, ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  const parsed = (() => {
    try {
      return JSON.parse(text) as { data?: any; errors?: unknown[] };
    } catch {
      return {};
    }
  })();
  if (!res.ok || parsed.errors?.length || !parsed.data) return { failure: `${res.status}: ${text.slice(0, 300)}` };
  return { data: parsed.data };
}

const ENTITIES = `query Entities($representations: [_Any!]!) { _entities(representations: $representations) { ... on User { id } } }`;
const USER = 'query User($id: ID!) { user(id: $id) { id profile { firstName } } }';

interface CountedOp {
  operation: string;
  what: string;
  budget: number;
  /** The i-th request's variables and headers, and a check of its answer (what is wrong, or nothing). */
  request(i: number): { query: string; variables: Record<string, unknown>; headers?: Record<string, string> };
  check?(data: any): string | undefined;
}

function countedOps(userId: string, page: string[], orgId: string): CountedOp[] {
  const userCheck = (data: any) => (data.user?.id === userId ? undefined : `user ${JSON.stringify(data.user)}`);
  return [
    {
      operation: 'updateHumanProfile',
      what: 'ManagementService/UpdateHumanProfile',
      budget: 1,
      request: (i) => ({ query: OPS.updateHumanProfile, variables: { input: { userId, ...PROFILES[i % 2]! } } }),
    },
    {
      operation: 'addHumanUser',
      what: 'a new user, no password: UserService/AddHumanUser',
      budget: 1,
      request: () => ({
        query: OPS.addHumanUser,
        variables: {
          input: { profile: { firstName: 'Grace', lastName: 'Hopper' }, email: { email: uniqueEmail('up'), isVerified: true } },
        },
      }),
    },
    {
      operation: `_entities, ${page.length} User representations`,
      what: 'one UserService/ListUsers (in-user-ids query) for the whole page',
      budget: 1,
      request: () => ({ query: ENTITIES, variables: { representations: page.map((id) => ({ __typename: 'User', id })) } }),
      check: (data: any) => {
        const ids = (data._entities as ({ id: string } | null)[]).map((e) => e?.id);
        return ids.length === page.length && ids.every((id, i) => id === page[i]) ? undefined : `entities ${JSON.stringify(ids)}`;
      },
    },
    {
      operation: 'user(id) { id profile { firstName } }',
      // The acting organization is the caller's: GetMyUser names it (details.resourceOwner), side by side with the user's GetUserByID.
      what: 'no organization header: GetUserByID of the user, and GetMyUser for the acting organization (the caller’s)',
      budget: 2,
      request: () => ({ query: USER, variables: { id: userId } }),
      check: userCheck,
    },
    {
      operation: 'user(id) { id profile { firstName } }, x-service-orgid',
      what: 'the organization header names the acting organization: GetUserByID alone',
      budget: 1,
      request: () => ({ query: USER, variables: { id: userId }, headers: { 'x-service-orgid': orgId } }),
      check: userCheck,
    },
  ];
}

/** Each operation one request at a time through the front, its upstream calls counted around them. */
async function countCalls(h: Harness, front: Target, metricsUrl: string, ops: CountedOp[]): Promise<CallCount[]> {
  const n = COUNTED[h.opts.smoke ? 'smoke' : 'full'];
  const counts: CallCount[] = [];
  for (const op of ops) {
    // One request first, uncounted: the front's first of an operation may fetch what later ones
    // reuse (the JWKS). Odd: updateHumanProfile's first counted request (0) then changes the profile.
    const first = op.request(1);
    await post(front, first.query, first.variables, first.headers);
    const before = await upstreamCalls(metricsUrl);
    let failures = 0;
    let sample: string | undefined;
    for (let i = 0; i < n; i++) {
      const r = op.request(i);
      const answer = await post(front, r.query, r.variables, r.headers);
      const wrong = answer.failure ?? op.check?.(answer.data);
      if (wrong) {
        failures++;
        sample ??= wrong;
      }
    }
    const byMethod = since(await upstreamCalls(metricsUrl), before);
    const answered = n - failures;
    const perRequest = answered ? round(sum(byMethod) / answered, 2) : NaN;
    counts.push({ operation: op.operation, what: op.what, requests: n, byMethod, perRequest, budget: op.budget, failures, sample });
    h.log(
      `upstream/calls: ${op.operation}: ${perRequest} upstream calls per request (${JSON.stringify(byMethod)} over ${answered}), budget ${op.budget}` +
        (failures ? `; ${failures} failed, e.g. ${sample}` : ''),
    );
  }
  return counts;
}

const SCENARIO = (name: string) => scenarios.find((s) => s.name === name)!;

/** Starts the upstream and the front, measures the three paths, then counts the calls. */
export async function runUpstream(h: Harness): Promise<UpstreamRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-upstream-'));
  const { duration, warmup } = ((s) => ({ duration: Math.min(h.opts.duration, s.duration), warmup: Math.min(h.opts.warmup, s.warmup) }))(
    UPSTREAM_SECONDS[h.opts.smoke ? 'smoke' : 'full'],
  );
  const connections = h.opts.connections;
  const noStores = { MONGODB_URL: '', REDIS_URL: '' };
  const children: Child[] = [];
  const samplers: ReturnType<Harness['rssSampler']>[] = [];
  const run: UpstreamRun = { rows: [], calls: [], duration, warmup, connections, peakRssMb: { front: 0, upstream: 0 }, problems: [] };
  const t0 = performance.now();
  const profDir = path.join(os.tmpdir(), `bench-upstream-front-${h.run}`);
  let window: { fromUs?: number; toUs?: number } = {};
  try {
    h.log('upstream: starting the upstream (an embedded gateway) and the front (upstream mode) in front of it');
    const upstream = await h.startChild('gateway', { ...h.env, ...noStores, DATA_DIR: path.join(dir, 'upstream') }, []);
    children.push(upstream);
    const origin = new URL(upstream.target.url).origin;
    // With --cpu-prof: the front's main thread over the upstream-mode measurement (its profile is written when it stops).
    if (h.opts.cpuProf) mkdirSync(profDir, { recursive: true });
    const frontArgs = h.opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    const front = await h.startChild(
      'gateway-front',
      { ...h.env, ...noStores, DATA_DIR: path.join(dir, 'front'), ZITADEL_URL: origin },
      frontArgs,
    );
    children.push(front);
    samplers.push(h.rssSampler(front.proc.pid!), h.rssSampler(upstream.proc.pid!));
    const metricsUrl: string = front.info.metricsUrl;
    // The front takes the upstream's tokens: the admin's, verified by the upstream's /oauth/v2/keys.
    const frontTarget: Target = { url: front.target.url, adminToken: upstream.target.adminToken };

    const paths: [UpstreamRow['path'], string, string, Target][] = [
      [
        'upstream mode',
        'updateHumanProfile',
        'GraphQL updateHumanProfile to the front, which calls ManagementService/UpdateHumanProfile on the upstream over gRPC',
        frontTarget,
      ],
      ['direct GraphQL', 'updateHumanProfile', 'GraphQL updateHumanProfile to the upstream (embedded store)', upstream.target],
      [
        'upstream gRPC',
        'updateHumanProfile-grpc',
        'ManagementService/UpdateHumanProfile over gRPC to the upstream (h2c, ghz)',
        upstream.target,
      ],
    ];
    for (const [label, scenario, what, target] of paths) {
      // bench/run.ts has failed already under CI when ghz is missing; elsewhere the row is left out.
      if (SCENARIO(scenario).loader === 'ghz' && !findGhz()) {
        h.log(`upstream/${label}: SKIPPED, ghz not found (install it with \`${GHZ_INSTALL}\`)`);
        continue;
      }
      const load = (): Promise<Load> => SCENARIO(scenario).load(target, connections);
      if (warmup > 0) {
        const warm = await h.drive(target.url, await load(), connections, warmup);
        if (warm.non2xx + warm.errors + warm.graphqlErrors) h.log(`upstream/${label}: warm-up failures, e.g. ${warm.sample}`);
      }
      const measuredLoad = await load();
      h.log(`upstream/${label}: measuring ${duration} s, ${connections} connections`);
      const calls0 = label === 'upstream mode' ? await upstreamCalls(metricsUrl) : undefined;
      const [f0, u0] = await Promise.all([h.mark(front), h.mark(upstream)]);
      const m = await h.drive(target.url, measuredLoad, connections, duration);
      const [f1, u1] = await Promise.all([h.mark(front), h.mark(upstream)]);
      if (label === 'upstream mode') window = { fromUs: f0.mark, toUs: f1.mark };
      const calls = calls0 ? sum(since(await upstreamCalls(metricsUrl), calls0)) : undefined;
      const perReq = (a: number, b: number) => (m.requests ? round((b - a) / 1000 / m.requests, 3) : undefined);
      const row: UpstreamRow = {
        path: label,
        what,
        ...m,
        ...(label === 'upstream mode' ? { frontCpuMsPerRequest: perReq(f0.cpuUs, f1.cpuUs) } : {}),
        upstreamCpuMsPerRequest: perReq(u0.cpuUs, u1.cpuUs),
        ...(calls !== undefined && m.requests ? { upstreamCallsPerRequest: round(calls / m.requests, 3) } : {}),
        check: measuredLoad.after ? await measuredLoad.after() : undefined,
      };
      run.rows.push(row);
      h.log(
        `upstream/${label}: ${m.rps} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, failures (non-2xx/conn/app) ${m.non2xx}/${m.errors}/${m.graphqlErrors}` +
          (m.sample ? `, e.g. ${m.sample}` : '') +
          (row.check?.storeWrites !== undefined ? `, ${m.requests} requests / ${row.check.storeWrites} store writes` : ''),
      );
    }
    const direct = run.rows.find((r) => r.path === 'direct GraphQL');
    const grpc = run.rows.find((r) => r.path === 'upstream gRPC');
    for (const r of run.rows) {
      if (direct?.rps) r.ratioDirect = round(r.rps / direct.rps, 3);
      if (grpc?.rps) r.ratioGrpc = round(r.rps / grpc.rps, 3);
    }

    const [user] = await makeUsers(upstream.target, 1);
    const page = (await makeUsers(upstream.target, PAGE)).map((u) => u.id);
    run.calls = await countCalls(h, frontTarget, metricsUrl, countedOps(user!.id, page, upstream.info.defaultOrgId));
    h.log(`upstream: done in ${Math.round((performance.now() - t0) / 100) / 10} s from the start of the children`);
    for (const c of run.calls) {
      if (c.failures) run.problems.push(`${c.operation}: ${c.failures} of ${c.requests} failed, e.g. ${c.sample}`);
      else if (c.perRequest > c.budget) run.problems.push(`${c.operation}: ${c.perRequest} upstream calls per request, budget ${c.budget}`);
    }
  } finally {
    const [frontRss, upstreamRss] = samplers.map((s) => s.peakMb());
    run.peakRssMb = { front: frontRss ?? 0, upstream: upstreamRss ?? 0 };
    for (const s of samplers) s.stop();
    for (const child of children.reverse()) await h.stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    if (h.opts.cpuProf) {
      const busiest = readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => summarize(path.join(profDir, f), 15, window))
        .sort((a, b) => b.busyMs - a.busyMs)[0];
      const answered = run.rows.find((r) => r.path === 'upstream mode')?.requests;
      if (busiest)
        h.log(
          `upstream: CPU profile of the front over the upstream-mode measurement` +
            (answered ? `, ${round(busiest.busyMs / answered, 3)} ms busy per request` : '') +
            ` (kept in ${profDir})\n${formatSummary(busiest)}`,
        );
    }
  }
  return run;
}

const num = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));
const ratio = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(2));

/** The three paths, then the calls per operation. */
export function upstreamTables(run: UpstreamRun): string {
  const head = [
    'updateHumanProfile by',
    'req/s',
    'p50 ms',
    'p99 ms',
    'failures: non-2xx/conn/app',
    '× direct GraphQL',
    '× upstream gRPC',
    'CPU ms/req: front',
    'upstream',
    'upstream calls/req',
    'requests / store writes',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 1 ? '---' : '---:')).join('|')}|`];
  for (const r of run.rows)
    lines.push(
      `| ${[
        r.path,
        num(r.rps),
        num(r.p50),
        num(r.p99),
        `${r.non2xx}/${r.errors}/${r.graphqlErrors}`,
        ratio(r.ratioDirect),
        ratio(r.ratioGrpc),
        num(r.frontCpuMsPerRequest, 2),
        num(r.upstreamCpuMsPerRequest, 2),
        num(r.upstreamCallsPerRequest, 2),
        r.check?.storeWrites !== undefined ? `${r.requests} / ${r.check.storeWrites}` : '-',
      ].join(' | ')} |`,
    );
  const callsHead = [
    'GraphQL operation (through the front)',
    'upstream calls/req',
    'budget',
    'calls by method',
    'what they are',
    'requests',
    'failures',
  ];
  lines.push('', `| ${callsHead.join(' | ')} |`, `|${callsHead.map((_, i) => (i < 1 || i === 3 || i === 4 ? '---' : '---:')).join('|')}|`);
  for (const c of run.calls)
    lines.push(
      `| ${[
        c.operation,
        num(c.perRequest, 2),
        String(c.budget),
        Object.entries(c.byMethod)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none',
        c.what,
        String(c.requests),
        String(c.failures),
      ].join(' | ')} |`,
    );
  return lines.join('\n');
}
