// The documentation's links: every relative link of README.md, CHANGELOG.md, docs/ and the
// examples' READMEs names a file inside the repository that exists, and every #anchor one of
// the target's headings (GitHub's slugs). Nothing points outside the repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  const examples = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, 'examples', d.name, 'README.md')))
    .map((d) => path.join('examples', d.name, 'README.md'));
  return ['README.md', 'CHANGELOG.md', ...docs, ...examples];
}

/** GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}_ -]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** The links of a markdown file outside code blocks: [text](target) and ![alt](target). */
function linksOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the documentation', () => {
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files)('%s: every relative link names a file of the repository, and its anchor a heading there', (file) => {
    const broken: string[] = [];
    for (const link of linksOf(file)) {
      if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
      const [target = '', anchor] = link.split('#');
      const resolved = target ? path.resolve(root, path.dirname(file), decodeURIComponent(target)) : path.join(root, file);
      if (!resolved.startsWith(root)) {
        broken.push(`${link}: outside the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
        broken.push(`${link}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });
});
