// A node:test reporter for test/run.ts: one JSON line per finished test, `{"result": "passed" |
// "failed" | "skipped", "name", "file"?}` (run.ts's SummaryLine), which the runner adds up over
// both backends into the one summary it prints last. Suites, and parents failing only because a
// subtest did, are not counted again. Last, one `{"file", "ms"}` line per test file: the time its
// top-level tests took (a file's tests run one after another), so the runner can name the slowest
// and the suite's 15 minutes stay in view. Plain JavaScript: node loads reporters before tsx is hooked in.
export default async function* summaryReporter(source) {
  const fileMs = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, file, skip, todo, details, nesting } = event.data;
    if (nesting === 0 && file !== undefined) fileMs.set(file, (fileMs.get(file) ?? 0) + (details?.duration_ms ?? 0));
    if (details?.type === 'suite') continue;
    if (event.type === 'test:fail' && details?.error?.failureType === 'subtestsFailed') continue;
    const result = event.type === 'test:fail' ? 'failed' : skip || todo ? 'skipped' : 'passed';
    yield `${JSON.stringify({ result, name, ...(file ? { file } : {}) })}\n`;
  }
  for (const [file, ms] of fileMs) yield `${JSON.stringify({ file, ms: Math.round(ms) })}\n`;
}
