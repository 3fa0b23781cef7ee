// Prints one line per jest tier, then one closing line for the whole run. The closing line names
// every tier that was expected but not run and every skipped or todo test, so a partial run can
// never read like a full one: only "ALL RAN" means every expected tier ran with nothing skipped.
// Usage: summarize-jest.js [--not-run "tier (why)"]... result.json...
// (each result file is named <tier>.json, jest's --json output).
const { readFileSync, existsSync } = require('node:fs');
const { basename } = require('node:path');

const notRun = [];
const files = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--not-run') notRun.push(args[++i]);
  else files.push(args[i]);
}

const total = { passed: 0, failed: 0, skipped: 0, todo: 0 };
const crashed = [];
for (const file of files) {
  const tier = basename(file, '.json');
  if (!existsSync(file)) {
    crashed.push(tier);
    total.failed += 1;
    console.log(`${tier}: CRASHED (no result file ${file})`);
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const counts = {
    passed: r.numPassedTests,
    failed: r.numFailedTests + r.numRuntimeErrorTestSuites,
    skipped: r.numPendingTests,
    todo: r.numTodoTests,
  };
  for (const key of Object.keys(total)) total[key] += counts[key];
  console.log(`${tier}: ${describe(counts)}`);
}
for (const reason of notRun) console.log(`${reason.replace(/ \(/, ': NOT RUN (')}`);

const complete = notRun.length === 0 && crashed.length === 0 && total.skipped === 0 && total.todo === 0;
const gaps = [
  ...crashed.map((tier) => `${tier} CRASHED`),
  ...notRun.map((reason) => `${reason.replace(/ \(/, ' NOT RUN (')}`),
  ...(total.skipped ? [`${total.skipped} tests skipped`] : []),
  ...(total.todo ? [`${total.todo} tests todo`] : []),
];
const verdict = complete ? 'ALL RAN' : `PARTIAL RUN: ${gaps.join('; ')}`;
console.log(`${describe(total)} | ${verdict}`);

/** Every count, zeros included: a missing "0 skipped" could mean "not counted". */
function describe(c) {
  return `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped, ${c.todo} todo`;
}
