// The closing lines of a test run, from vitest's JSON report (.ci/run writes it):
//   node scripts/test-report.mjs test-artifacts/vitest.json
// prints the ten slowest test files with their wall time, so that the next slow one is seen
// before it turns red, then one plain line with the counts. Exits 1 when a test failed or
// none ran, so CI can hold the counts and the slow list even for a red run.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const file = process.argv[2] ?? 'test-artifacts/vitest.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.log(`no test report at ${file} (${err.message}): the test run ended before it was written`);
  process.exit(1);
}

const files = report.testResults
  .map((r) => ({
    name: path.relative(process.cwd(), r.name),
    seconds: (r.endTime - r.startTime) / 1000,
    tests: r.assertionResults.length,
    failed: r.assertionResults.filter((a) => a.status === 'failed').length || (r.status === 'failed' ? 1 : 0),
  }))
  .sort((a, b) => b.seconds - a.seconds);

const wall = (Math.max(...report.testResults.map((r) => r.endTime)) - report.startTime) / 1000;
console.log(`Ten slowest test files (wall time each; ${files.length} files, ${wall.toFixed(0)} s for the whole run):`);
for (const f of files.slice(0, 10)) {
  console.log(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.name} (${f.tests} tests${f.failed ? `, ${f.failed} failed` : ''})`);
}

const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
const failedFiles = files.filter((f) => f.failed);
if (failedFiles.length) console.log(`failed in: ${failedFiles.map((f) => f.name).join(', ')}`);
if (report.numTotalTests === 0 || report.numFailedTests > 0 || failedFiles.length) process.exit(1);
