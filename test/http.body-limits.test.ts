// Request bodies before they are read: without a valid token only a small body is
// accepted (a larger one is refused from its headers, or cut while it streams in),
// and the bytes in flight are bounded per client address and for the process.
// The burst test runs the gateway in a child process and reads its peak RSS.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const CAP = maxRequestBodyBytes(loadConfig({}));
/** The body cap without a valid token (UNAUTHENTICATED_BODY_BYTES in src/http/body-limit.ts). */
const UNAUTHENTICATED_BODY_BYTES = 64 * 1024;
const TYPENAME = '{"query":"{ __typename }"}';
/** A valid request of `bytes` bytes: `{ __typename }` padded with white space. */
const padded = (bytes: number) => Buffer.from(TYPENAME + ' '.repeat(bytes - TYPENAME.length));

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  json: any;
  /** The server asked for the body (100 Continue). */
  continued: boolean;
}

/**
 * A POST on its own connection, closed once the answer is in (or, with a keep-alive
 * `agent`, left to it with the whole body sent). `send` is how much of `body` goes
 * out; the rest is held back, so an answer that comes anyway was given without
 * reading the body.
 */
function post(
  url: string,
  opts: { headers?: Record<string, string>; body?: Buffer; send?: number; chunked?: boolean; length?: number; agent?: Agent },
) {
  const body = opts.body ?? Buffer.alloc(0);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.chunked) headers['transfer-encoding'] = 'chunked';
  else headers['content-length'] = opts.length ?? body.length;
  let continued = false;
  const req = request(url, { method: 'POST', agent: opts.agent ?? false, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('continue', () => (continued = true));
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res
        .on('data', (c) => (text += c))
        .on('end', () => {
          if (!opts.agent) req.destroy();
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, json, continued });
        });
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  const send = opts.send ?? body.length;
  for (let i = 0; i < send; i += 1 << 16) req.write(body.subarray(i, Math.min(send, i + (1 << 16))));
  if (send === body.length && !opts.headers?.expect) req.end();
  return { req, answer };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

async function until(what: string, check: () => Promise<boolean>, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('request bodies without a valid token (embedded stores)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('small queries keep their GraphQL answers: UNAUTHENTICATED (200 on application/json, 401 on application/graphql-response+json), __typename and the introspection query', async () => {
    const meQuery = Buffer.from('{"query":"{ me { id } }"}');
    for (const [accept, status] of [
      ['application/json', 200],
      ['application/graphql-response+json', 401],
    ] as const) {
      const me = await post(gw.url, { body: meQuery, headers: { accept } }).answer;
      expect(me.status, accept).toBe(status);
      expect(me.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(me.json.errors[0].extensions.httpStatus).toBe(401);
      expect(me.json.errors[0].path).toEqual(['me']);
      const forged = await post(gw.url, { body: meQuery, headers: { accept, ...bearer('forged.token.here') } }).answer;
      expect(forged.status, accept).toBe(status);
      expect(forged.json.errors[0].message).toBe('Invalid token');
    }

    const typename = await post(gw.url, { body: padded(UNAUTHENTICATED_BODY_BYTES) }).answer;
    expect(typename.status).toBe(200);
    expect(typename.json.data.__typename).toBe('Query');
    const introspection = JSON.stringify({
      query: getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }),
    });
    const schema = await post(gw.url, { body: Buffer.from(introspection) }).answer;
    expect(schema.status).toBe(200);
    expect(schema.json.data.__schema.queryType.name).toBe('Query');
  });

  it('a larger Content-Length is refused with 401 from the headers, before the body is sent', async () => {
    const body = padded(10_000_000);
    for (const headers of [{}, bearer('forged.token.here')]) {
      // Only 1 KB of the 10 MB goes out: the answer comes without the body.
      const res = await post(gw.url, { body, send: 1024, headers }).answer;
      expect(res.status).toBe(401);
      expect(res.json).toEqual({
        errors: [
          {
            message: `${'authorization' in headers ? 'Invalid token' : 'Authentication required'}: a request body over ${UNAUTHENTICATED_BODY_BYTES} bytes needs a valid bearer token.`,
            extensions: { code: 'UNAUTHENTICATED', grpcCode: 16, details: [], httpStatus: 401 },
          },
        ],
      });
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    // One byte over the small cap is enough; the whole body sent is answered the same.
    expect((await post(gw.url, { body: padded(UNAUTHENTICATED_BODY_BYTES + 1) }).answer).status).toBe(401);

    // Expect: 100-continue: the body is asked for only with a valid token.
    const refused = await post(gw.url, { body, send: 0, headers: { expect: '100-continue' } }).answer;
    expect(refused).toMatchObject({ status: 401, continued: false });
    const asked = post(gw.url, { body, send: 0, headers: { expect: '100-continue', ...bearer(gw.adminToken) } });
    asked.req.once('continue', () => asked.req.end(body));
    expect(await asked.answer).toMatchObject({ status: 200, continued: true, json: { data: { __typename: 'Query' } } });

    const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.status === 401 && l.rootField === null);
    expect(line).toMatchObject({ errors: ['UNAUTHENTICATED'], caller: null });
  });

  it('a chunked body without a token is cut at the small cap (401, or the connection ends)', async () => {
    const small = await post(gw.url, { body: padded(UNAUTHENTICATED_BODY_BYTES), chunked: true }).answer;
    expect(small.status).toBe(200);
    const big = await post(gw.url, { body: padded(2_000_000), chunked: true }).answer.catch((err) => ({ status: -1, error: err }));
    if (big.status === -1) expect(String((big as any).error.code)).toMatch(/EPIPE|ECONNRESET/);
    else expect(big).toMatchObject({ status: 401, json: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] } });
    // With a token the same body is read.
    const signedIn = await post(gw.url, { body: padded(2_000_000), chunked: true, headers: bearer(gw.adminToken) }).answer;
    expect(signedIn.json.data.__typename).toBe('Query');
  });
});

describe('request-body bytes in flight, per client address and per process', () => {
  const cap = CAP;
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    // A client address may hold two largest bodies at once (the default), the process three.
    gw = await startGateway({ env: { TRUST_PROXY: '1', HTTP_MAX_INFLIGHT_BYTES: String(3 * cap) } });
    base = gw.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => gw?.close());

  const from = (ip: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...bearer(gw.adminToken), ...headers });
  /** A request that declares `length` bytes and sends almost none: it holds its reservation until cut. */
  const hold = (ip: string, length: number) => post(gw.url, { headers: from(ip), body: padded(length), send: 16 });
  const inFlight = () => metric(base, 'gateway_http_body_bytes_in_flight');

  it('over the client budget: 429 with Retry-After before the body is read; over the process budget: 503; aborted requests free theirs', async () => {
    const a1 = hold('198.51.100.1', cap);
    const a2 = hold('198.51.100.1', cap);
    await until('two bodies in flight', async () => (await inFlight()) === 2 * cap);

    // Nothing of this body is sent: the 429 comes from the headers.
    const over = await post(gw.url, { headers: from('198.51.100.1'), body: padded(1_000_000), send: 0 }).answer;
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
    expect(over.json.errors).toHaveLength(1);
    expect(over.json.errors[0].extensions).toEqual({
      code: 'RESOURCE_EXHAUSTED',
      grpcCode: 8,
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }],
      httpStatus: 429,
    });
    // Another address still gets in, up to the process budget.
    const b1 = hold('198.51.100.2', cap);
    await until('three bodies in flight', async () => (await inFlight()) === 3 * cap);
    const busy = await post(gw.url, { headers: from('198.51.100.3'), body: padded(1_000_000), send: 0 }).answer;
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.json.errors[0].extensions.code).toBe('UNAVAILABLE');
    // Requests without a body are not held back.
    expect(
      (
        await fetch(`${gw.url}?query=${encodeURIComponent('{ __typename }')}`, {
          headers: { ...from('198.51.100.1'), 'x-graphql-yoga-csrf': '1' },
        })
      ).status,
    ).toBe(200);

    // The clients go away mid-body: every reservation is released.
    for (const { req, answer } of [a1, a2, b1]) {
      answer.catch(() => {});
      req.destroy();
    }
    await until('the aborted bodies released', async () => (await inFlight()) === 0);

    const again = await post(gw.url, { headers: from('198.51.100.1'), body: padded(cap) }).answer;
    expect(again.status).toBe(200);
    expect(again.json.data.__typename).toBe('Query');
    expect(await inFlight()).toBe(0);
    expect(await metric(base, 'gateway_http_body_refused_total{reason="client_budget"}')).toBe(1);
    expect(await metric(base, 'gateway_http_body_refused_total{reason="process_budget"}')).toBe(1);
  });
});

// Peak resident memory of a process (VmHWM), after resetting it to the current size.
const status = (pid: number) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)![1]) * 1024;

describe.skipIf(process.platform !== 'linux')('a burst of large bodies without a token (gateway in a child process)', () => {
  let child: ChildGateway;
  beforeAll(async () => {
    child = await spawnGateway();
  });
  afterAll(async () => child?.stop());

  it('100 parallel 10 MB bodies from one address, sent in full: each is refused with 401 and the peak RSS stays within 200 MB of the baseline', async () => {
    const pid = child.child.pid!;
    // A legal addHumanUser: 15 metadata values of 500000 bytes.
    const body = Buffer.from(
      JSON.stringify({
        query: 'mutation AddHumanUser($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }',
        variables: {
          input: {
            profile: { firstName: 'Big', lastName: 'Body' },
            email: { email: `big-body-${Date.now()}@example.com`, isVerified: true },
            metadata: Array.from({ length: 15 }, (_, i) => ({ key: `k${i}`, value: randomBytes(500_000).toString('base64') })),
          },
        },
      }),
    );
    expect(body.length).toBeGreaterThan(10_000_000);
    expect(body.length).toBeLessThan(CAP);
    // Warm up the paths, then take the baseline.
    for (let i = 0; i < 3; i++) expect((await post(child.url, { body: Buffer.from('{"query":"{ me { id } }"}') }).answer).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const baseline = kib(status(pid), 'VmRSS');
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS

    // Keep-alive connections that send every byte whatever the answer: the gateway reads and drops them.
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    const burst = Array.from({ length: 100 }, () => post(child.url, { body, agent }));
    const answers = await Promise.all(burst.map((b) => b.answer));
    await Promise.all(burst.map((b) => (b.req.writableFinished ? undefined : once(b.req, 'finish'))));
    agent.destroy();
    const peak = kib(status(pid), 'VmHWM');
    console.log(
      `[body burst] child RSS baseline ${(baseline / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB, growth ${((peak - baseline) / 2 ** 20).toFixed(0)} MB`,
    );
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    expect(peak - baseline).toBeLessThan(200 * 2 ** 20);

    // The same body with a valid token is read and the user created.
    const signedIn = await post(child.url, { body, headers: bearer(child.adminToken) }).answer;
    expect(signedIn.status).toBe(200);
    expect(signedIn.json.data.addHumanUser.userId).toMatch(/^\d+$/);
  });
});
