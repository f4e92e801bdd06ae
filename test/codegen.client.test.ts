// docs/codegen.md, run as a frontend team would run it: its codegen.ts, src/graphql-client.ts
// and src/users.ts (the ```ts blocks whose first line names the file) go into a fresh project,
// GraphQL Code Generator's CLI generates src/gql/ there, and that project, its node_modules
// then holding only graphql, @graphql-typed-document-node/core and typescript, type-checks
// with strict. A wrong variable type and a read through a masked fragment then fail tsc. The
// functions of the page then run against a gateway whose TRUSTED_DOCUMENTS is the manifest
// that run wrote.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './support/gateway.ts';

const root = path.resolve(import.meta.dirname, '..');
const page = readFileSync(path.join(root, 'docs/codegen.md'), 'utf8');
/** What a generated file may import besides its own relative files. */
const RUNTIME_PACKAGES = ['graphql', '@graphql-typed-document-node/core'];

/** The page's ```ts block whose first line is `// <file>`. */
function documented(file: string): string {
  const block = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.startsWith(`// ${file}\n`));
  if (!block) throw new Error(`docs/codegen.md has no \`\`\`ts block starting with "// ${file}"`);
  return block;
}

function run(args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const tsc = (dir: string) => run([path.join(dir, 'node_modules/typescript/bin/tsc'), '-p', dir], dir);

describe('the client setup of docs/codegen.md', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'codegen-client-'));
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  };
  let generation: { status: number | null; output: string };

  beforeAll(() => {
    for (const file of ['codegen.ts', 'src/graphql-client.ts', 'src/users.ts']) write(file, documented(file));
    write('schema.graphql', readFileSync(path.join(root, 'schema.graphql'), 'utf8'));
    write('package.json', JSON.stringify({ name: 'frontend', private: true, type: 'module' }));
    const compilerOptions = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'] };
    write('tsconfig.json', JSON.stringify({ compilerOptions: { ...compilerOptions, types: [], noEmit: true }, include: ['src'] }));
    // Generating, the project has the build tools (this repository's node_modules, where the
    // CLI finds the preset); then only the runtime packages and the compiler: anything else the
    // generated code needed would not resolve.
    symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'), 'dir');
    generation = run([path.join(root, 'node_modules/@graphql-codegen/cli/esm/bin.js'), '--config', 'codegen.ts'], dir);
    rmSync(path.join(dir, 'node_modules'));
    for (const name of [...RUNTIME_PACKAGES, 'typescript']) {
      mkdirSync(path.dirname(path.join(dir, 'node_modules', name)), { recursive: true });
      symlinkSync(realpathSync(path.join(root, 'node_modules', name)), path.join(dir, 'node_modules', name), 'dir');
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('generates src/gql/ with the persisted-documents manifest', () => {
    expect(generation.status, generation.output).toBe(0);
    const files = readdirSync(path.join(dir, 'src/gql')).sort();
    expect(files).toEqual(['fragment-masking.ts', 'gql.ts', 'graphql.ts', 'index.ts', 'persisted-documents.json']);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'src/gql/persisted-documents.json'), 'utf8')) as Record<string, string>;
    expect(Object.values(manifest).map((text) => /(?:^| )(?:query|mutation) (\w+)/.exec(text)?.[1])).toEqual(
      expect.arrayContaining(['Me', 'AddUser']),
    );
  });

  it('imports nothing but graphql, @graphql-typed-document-node/core and its own files', () => {
    const gql = path.join(dir, 'src/gql');
    for (const file of readdirSync(gql).filter((f) => f.endsWith('.ts'))) {
      const imports = ts.preProcessFile(readFileSync(path.join(gql, file), 'utf8'), true, true).importedFiles.map((i) => i.fileName);
      for (const specifier of imports) {
        if (RUNTIME_PACKAGES.includes(specifier)) continue;
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/[\w-]+\.js$/);
        expect(readdirSync(gql), `${file} imports ${specifier}`).toContain(specifier.slice(2).replace(/\.js$/, '.ts'));
      }
    }
  });

  it('type-checks with strict, and fails on a wrong variable type and on a masked field', () => {
    const clean = tsc(dir);
    expect(clean.output).toBe('');
    expect(clean.status).toBe(0);

    write(
      'src/wrong.ts',
      [
        "import { execute } from './graphql-client.js';",
        "import { AddUserMutation, MeQuery } from './users.js';",
        'const email = { email: "ada@example.com" };',
        "export const wrongType = () => execute(AddUserMutation, { input: { username: 42, profile: { firstName: 'A', lastName: 'B' }, email } });",
        'export const masked = async () => (await execute(MeQuery)).me.username;',
        '',
      ].join('\n'),
    );
    const wrong = tsc(dir);
    rmSync(path.join(dir, 'src/wrong.ts'));
    expect(wrong.status).not.toBe(0);
    expect(wrong.output).toMatch(/src\/wrong\.ts\(4,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    expect(wrong.output).toMatch(/src\/wrong\.ts\(5,\d+\): error TS2339: Property 'username' does not exist on type/);
    // Nothing else is wrong: the two lines are the only errors.
    expect(wrong.output.match(/error TS/g)).toHaveLength(2);
  });

  describe('against a gateway given the manifest as TRUSTED_DOCUMENTS', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      expect(generation.status, generation.output).toBe(0);
      gw = await startGateway({ env: { TRUSTED_DOCUMENTS: path.join(dir, 'src/gql/persisted-documents.json') } });
    });
    afterAll(async () => gw?.close());

    it("runs the page's query and mutation by their ids", async () => {
      const client = (await import(path.join(dir, 'src/graphql-client.ts'))) as { session: { url: string; token: string } };
      const users = (await import(path.join(dir, 'src/users.ts'))) as {
        whoAmI(): Promise<string>;
        addUser(username: string, email: string): Promise<string>;
      };
      client.session.url = gw.url;
      client.session.token = gw.adminToken;

      expect(await users.whoAmI()).toMatch(new RegExp(`\\(${gw.adminId}\\)$`));
      const username = `ada${Date.now().toString(36)}`;
      const userId = await users.addUser(username, `${username}@example.com`);
      expect((await gw.gateway.deps.store.lookup(`username:${username}`))?.aggregateId).toBe(userId);

      // The gateway is in trusted-documents mode: the same query as text is refused.
      const raw = await gw.raw({ query: 'query Me { me { id } }' });
      expect(raw.errors?.[0]?.message).toMatch(/^PersistedQueryOnly/);
    });
  });
});
