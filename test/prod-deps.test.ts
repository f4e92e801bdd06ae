// The production image installs `npm ci --omit=dev` (Dockerfile, prod-deps stage). This checks that
// set holds no development tool: not the npm `node` package (the Node 24 that npm scripts run on
// here; the image has its own), no test runner, browser driver, code generator or formatter.
// A devDependency may appear in it only when a production package needs it too, and then the
// tree must show that production parent.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const devNames = Object.keys(pkg.devDependencies);

// Shared with the production tree, each with the production package that pulls it in.
const SHARED: Record<string, string> = {
  '@graphql-typed-document-node/core': 'graphql-yoga',
  ajv: '@envelop/graphql-jit',
  'ajv-formats': '@envelop/graphql-jit',
  esbuild: 'tsx',
};

interface LsNode {
  version?: string;
  dependencies?: Record<string, LsNode>;
}

/** Every package of the tree, with the top-level production dependency it was reached from. */
function walk(tree: LsNode): Map<string, Set<string>> {
  const seen = new Map<string, Set<string>>();
  const visit = (node: LsNode, top: string, depth: number) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      const tops = seen.get(name) ?? new Set<string>();
      const known = tops.has(top);
      tops.add(top);
      seen.set(name, tops);
      if (!known && depth < 40) visit(child, top, depth + 1);
    }
  };
  for (const [name, child] of Object.entries(tree.dependencies ?? {})) {
    seen.set(name, new Set([...(seen.get(name) ?? []), name]));
    visit(child, name, 1);
  }
  return seen;
}

describe('production dependencies', () => {
  it('npm ls --omit=dev lists no devDependency but the shared ones, each needed by a production package', () => {
    const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const tree = JSON.parse(out) as LsNode;
    const found = walk(tree);
    expect(found.size).toBeGreaterThan(50);
    for (const prod of Object.keys(pkg.dependencies)) expect(found.has(prod), prod).toBe(true);

    const devInProd = devNames.filter((name) => found.has(name)).sort();
    expect(devInProd).toEqual(Object.keys(SHARED).sort());
    for (const [name, parent] of Object.entries(SHARED)) expect([...found.get(name)!]).toContain(parent);
    for (const tool of ['node', 'vitest', 'playwright-core', '@graphql-codegen/cli', 'prettier', 'typescript', 'vite']) {
      expect(found.has(tool), tool).toBe(false);
    }
  });

  it('the lock file marks every other devDependency dev-only, so npm ci --omit=dev leaves it out', () => {
    const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const notDevOnly = devNames.filter((name) => lock.packages[`node_modules/${name}`]?.dev !== true).sort();
    expect(notDevOnly).toEqual(Object.keys(SHARED).sort());
    expect(lock.packages['node_modules/node']?.dev).toBe(true);
  });
});
