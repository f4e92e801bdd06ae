// ZITADEL's Python SDK (zitadel-client 4.1.9 from PyPI), unchanged, against a gateway: Connect
// unary JSON over HTTP/1.1, configured with Zitadel.with_access_token("http://127.0.0.1:<port>",
// token). test/sdk/python/zitadel_sdk_run.py calls every operation the gateway serves for it on
// the v2 and the v2beta user and organization services, and the refusals, and prints what it
// got; this test checks each answer. The SDK lives in a virtual environment outside the
// repository that scripts/install-python-sdk.sh makes (.ci/run runs it first, so nothing is
// downloaded here): without it the suite fails under CI and is skipped loudly elsewhere.
//
// The v2beta case needs the v2beta services (zitadel.user.v2beta.UserService,
// zitadel.org.v2beta.OrganizationService), which another branch adds.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the examples, without types
import { createCredential } from '../examples/soft-authenticator.mjs';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeRequiring } from './support/servers.ts';

const VERSION = '4.1.9';
const SCRIPT = fileURLToPath(new URL('./sdk/python/zitadel_sdk_run.py', import.meta.url));

/** The venv's python when it imports zitadel-client VERSION (where scripts/install-python-sdk.sh puts it), else why not. */
function findPython(): { python: string; problem: string } {
  const cache = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  const venv = process.env.ZITADEL_PYTHON_SDK_VENV || path.join(cache, 'identity-gateway', `zitadel-client-${VERSION}`);
  const python = path.join(venv, 'bin', 'python');
  const problem = `zitadel-client ${VERSION} not installed in ${venv} (bash scripts/install-python-sdk.sh installs it)`;
  if (!existsSync(python)) return { python: '', problem };
  try {
    const got = execFileSync(python, ['-c', 'import importlib.metadata as m, zitadel_client; print(m.version("zitadel-client"))'], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    return got === VERSION ? { python, problem: '' } : { python: '', problem: `${problem}: it has ${got}` };
  } catch (err) {
    return { python: '', problem: `${problem}: ${(err as Error).message.split('\n')[0]}` };
  }
}

interface Line {
  version?: string;
  op?: string;
  ok?: boolean;
  result?: any;
  status?: number;
  body?: any;
  need?: string;
  options?: unknown;
  done?: boolean;
}

/** Runs the script to its end; answers its requests for a WebAuthn credential with a software authenticator. */
function runScript(python: string, env: Record<string, string>): Promise<{ lines: Line[]; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [SCRIPT], { env: { ...process.env, ...env, PYTHONWARNINGS: 'ignore' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: Line[] = [];
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // A cap for a hung script, far beyond the few seconds it takes.
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text) as Line;
      lines.push(line);
      if (line.need === 'credential') child.stdin.write(`${JSON.stringify(createCredential(line.options))}\n`);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ lines, code, stderr });
    });
  });
}

const { python, problem } = findPython();

describeRequiring(python, problem, `ZITADEL's Python SDK (zitadel-client ${VERSION}) over Connect JSON`, (py) => {
  let gw: TestGateway;
  let lines: Line[];
  const run = `r${Date.now().toString(36)}`;

  beforeAll(async () => {
    gw = await startGateway();
    const out = await runScript(py, { GATEWAY: gw.baseUrl, TOKEN: gw.adminToken, RUN: run });
    lines = out.lines;
    // Each outcome, for whoever reads the log of a failure (no token in it: the script prints none).
    for (const line of lines) console.log(JSON.stringify(line));
    expect(out.stderr.replace(/^.*(AuthlibDeprecationWarning|from authlib\.jose|It will be compatible).*\n?/gm, '')).toBe('');
    expect(out.code).toBe(0);
  });
  afterAll(async () => gw?.close());

  /** The outcome of one call, which must be there. */
  const outcome = (version: string, op: string): Line => {
    const line = lines.find((l) => l.version === version && l.op === op);
    if (!line) throw new Error(`${version} ${op}: not called (the script stopped before it; see the lines above)`);
    return line;
  };
  const ok = (version: string, op: string) => {
    const line = outcome(version, op);
    expect(line, `${version} ${op}`).toMatchObject({ ok: true });
    return line.result;
  };
  const refused = (version: string, op: string) => {
    const line = outcome(version, op);
    expect(line.ok, `${version} ${op}`).toBe(false);
    return { status: line.status, body: line.body };
  };

  it('the script ran to its end', () => {
    expect(lines.at(-1)).toEqual({ done: true });
  });

  /** The assertions both versions share: the same operations answer the same way. */
  function sameOperations(version: 'v2' | 'v2beta') {
    const tag = `${run}-${version}`;
    const added = ok(version, 'AddHumanUser');
    expect(added.userId).toMatch(/^\d+$/);
    expect(added.emailCode).toMatch(/^[A-Z0-9]{6}$/);
    expect(added.phoneCode).toMatch(/^[A-Z0-9]{6}$/);
    const secondId = ok(version, 'AddHumanUser (second)').userId;

    ok(version, 'VerifyEmail');
    ok(version, 'VerifyPhone');
    expect(ok(version, 'SetEmail').verificationCode).toMatch(/^[A-Z0-9]{6}$/);
    ok(version, 'VerifyEmail (new address)');

    const user = ok(version, 'GetUserByID').user;
    expect(user.userId).toBe(added.userId);
    expect(user.username).toBe(`py-${tag}`);
    expect(user.human.profile).toMatchObject({ givenName: 'Ada', familyName: 'Lovelace', displayName: 'Ada L.' });
    expect(user.human.email).toEqual({ email: `ada.new-${tag}@example.com`, isVerified: true });
    expect(user.human.phone).toMatchObject({ phone: '+41791234567', isVerified: true });

    // in_user_ids_query: the two users of the organization it names (an unknown id matches none), by user name.
    const listed = ok(version, 'ListUsers');
    expect(listed.result.map((u: { userId: string }) => u.userId)).toEqual([added.userId, secondId]);
    expect(String(listed.details.totalResult)).toBe('2');
    // (email ENDS_WITH, ignoring case, or the first id) and not the second user name.
    expect(ok(version, 'ListUsers (or, ENDS_WITH)').result.map((u: { userId: string }) => u.userId)).toEqual([added.userId]);

    // Methods the gateway does not serve (on v1 it has UpdateHumanProfile and SetHumanPassword): Connect's unimplemented.
    for (const op of ['UpdateHumanUser (not served)', 'SetPassword (not served)']) {
      expect(refused(version, op)).toMatchObject({ status: 501, body: { code: 'unimplemented' } });
    }

    // The three refusals, as ZITADEL gives them: 404 not_found, 400 invalid_argument naming the fields, 401.
    expect(refused(version, 'GetUserByID (unknown)')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    const invalid = refused(version, 'AddHumanUser (invalid)');
    expect(invalid).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    const badRequest = invalid.body.details.find((d: { type: string }) => d.type === 'google.rpc.BadRequest');
    expect(badRequest.debug.fieldViolations.map((v: { field: string }) => v.field).sort()).toEqual(['email.email', 'profile.given_name']);
    expect(invalid.body.message).toMatch(/^Invalid input: /);
    expect(refused(version, 'GetUserByID (bad token)')).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  }

  it('v2: AddOrganization, AddHumanUser, VerifyEmail, VerifyPhone, SetEmail, GetUserByID, ListUsers (in_user_ids, or, not, ENDS_WITH), the refusals', () => {
    expect(ok('v2', 'AddOrganization').organizationId).toMatch(/^\d+$/);
    sameOperations('v2');
  });

  it('v2: RegisterU2F, then VerifyU2FRegistration with the credential of a software authenticator', () => {
    const registered = ok('v2', 'RegisterU2F');
    expect(registered.u2fId).toMatch(/^\d+$/);
    expect(registered.publicKeyCredentialCreationOptions.rp.id).toBe('localhost');
    expect(ok('v2', 'VerifyU2FRegistration').details.sequence).toBeDefined();
  });

  // Needs the v2beta services (another branch).
  it('v2beta: CreateOrganization, then the same operations and refusals as v2', () => {
    expect(ok('v2beta', 'CreateOrganization').id).toMatch(/^\d+$/);
    sameOperations('v2beta');
  });
});
