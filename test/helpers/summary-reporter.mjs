// A node:test reporter for test/run.ts: one JSON line per finished test, `{"result": "passed" |
// "failed" | "skipped", "name"}` (run.ts's SummaryLine), which the runner adds up over every file
// and both backends into the one summary it prints last. Suites, and parents failing only because
// a subtest did, are not counted again. Plain JavaScript: node loads reporters before tsx is hooked in.
export default async function* summaryReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, skip, todo, details } = event.data;
    if (details?.type === 'suite') continue;
    if (event.type === 'test:fail' && details?.error?.failureType === 'subtestsFailed') continue;
    const result = event.type === 'test:fail' ? 'failed' : skip || todo ? 'skipped' : 'passed';
    yield `${JSON.stringify({ result, name })}\n`;
  }
}
