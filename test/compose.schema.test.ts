// docker-compose.yml checked against the Compose Specification's own JSON schema (vendored in
// scripts/compose-spec/), since CI has no Docker engine to run `docker compose config`; and the
// promises the file makes beside the schema: pinned images, loopback-bound ports, mailpit only in
// the dev profile, GraphiQL and introspection passed through.
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  ports?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
}
const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service> };

function validator() {
  const schema = JSON.parse(read('scripts/compose-spec/compose-spec.json')) as object;
  // strict: false because the schema uses annotations (deprecated, $comment-like keys) that
  // draft-07 does not define; allErrors so a failure lists every violation at once.
  const ajv = new Ajv({ strict: false, allErrors: true });
  // ajv-formats is CommonJS with exports.default: under NodeNext its default import is the module.
  formats.default(ajv);
  // The schema names draft-07 by its https address, which ajv does not know by that name.
  ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
  return ajv.compile(schema);
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema', () => {
    const validate = validator();
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema can fail: a service with an unknown key and ports that are not a list is refused', () => {
    const validate = validator();
    const broken = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
    broken.services.gateway!.restart_policy = 'always';
    broken.services.gateway!.ports = 4000;
    expect(validate(broken)).toBe(false);
    const paths = (validate.errors ?? []).map((e: { instancePath: string }) => e.instancePath);
    expect(paths).toContain('/services/gateway');
    expect(paths).toContain('/services/gateway/ports');
  });

  it('pins every image to an exact version', () => {
    const images = Object.values(compose.services).flatMap((s) => (s.image ? [s.image] : []));
    expect(images.length).toBeGreaterThanOrEqual(3);
    for (const image of images) expect(image).toMatch(/:v?\d+\.\d+\.\d+$/);
    expect(read('Dockerfile')).not.toMatch(/^FROM\s+\S+:(?!\d+\.\d+\.\d+-)\S*/m);
  });

  it('binds every published port to 127.0.0.1 unless the environment says otherwise', () => {
    const ports = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]));
    expect(ports.length).toBeGreaterThan(0);
    for (const [, port] of ports) expect(port).toMatch(/^\$\{[A-Z_]+_BIND:-127\.0\.0\.1\}:\d+:\d+$/);
  });

  it('starts the SMTP catcher only in the dev profile, without the gateway waiting for it otherwise', () => {
    expect(compose.services.mailpit?.profiles).toEqual(['dev']);
    expect(compose.services.gateway?.profiles).toBeUndefined();
    expect(compose.services.gateway?.depends_on?.mailpit?.required).toBe(false);
    expect(compose.services.gateway?.environment?.SMTP_HOST).toBe('${SMTP_HOST:-}');
  });

  it('passes GRAPHIQL and INTROSPECTION through from the environment', () => {
    const env = compose.services.gateway?.environment ?? {};
    expect(env.GRAPHIQL).toBe('${GRAPHIQL:-}');
    expect(env.INTROSPECTION).toBe('${INTROSPECTION:-}');
  });
});
