// Sizes a reader can take in at once: no file in src/ over 400 lines, no function over 120.
//   node scripts/check-sizes.mjs            lists what is over, exits 1 if anything is
//   node scripts/check-sizes.mjs --top 15   also the longest functions, over or not
// .ci/run runs it. There is no allowlist: split what grows over, do not list it.
// A function is any function declaration, expression, arrow function, method or accessor; its
// length runs from its first line to its last, nested functions included (a closure that builds
// an adapter counts whole: that is what has to be read at once).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 120;

const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : name.endsWith('.ts') ? [full] : [];
  });

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node) ||
  ts.isConstructorDeclaration(node);

/** A readable name for a function node: its own, or the variable, property or call it sits in. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text;
  if (parent && ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

const over = [];
const functions = [];
for (const file of files('src')) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) over.push(`${file}: ${lines} lines (at most ${MAX_FILE_LINES})`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (isFunction(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = end - start + 1;
      functions.push({ where: `${file}:${start + 1}`, name: nameOf(node), length });
      if (length > MAX_FUNCTION_LINES) over.push(`${file}:${start + 1}: ${nameOf(node)}, ${length} lines (at most ${MAX_FUNCTION_LINES})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

const topIndex = process.argv.indexOf('--top');
if (topIndex > 0) {
  const n = Number(process.argv[topIndex + 1] ?? 10);
  console.log(`The ${n} longest functions in src/:`);
  for (const f of functions.sort((a, b) => b.length - a.length).slice(0, n))
    console.log(`  ${String(f.length).padStart(4)}  ${f.name}  ${f.where}`);
}
if (over.length) {
  console.log(`Over the sizes a reader takes in at once:\n${over.map((o) => `  ${o}`).join('\n')}`);
  process.exit(1);
}
console.log(`sizes: every file in src/ within ${MAX_FILE_LINES} lines, every function within ${MAX_FUNCTION_LINES}`);
