// ravenctl send in a real pseudo-terminal (util-linux `script`, part of every Debian system):
// missing fields are asked for, answered as a person types them, and the email is sent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
});

test('send prompts for from, subject and body in a terminal, then sends', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.CI; // the CLI never prompts under CI
  const command = `${process.execPath} --import tsx cli/main.ts send --api-key ${t.apiKey} --base-url ${t.url} --to pty@${t.domain}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env, cwd: root });
  const answers: Array<[RegExp, string]> = [
    [/From \(/, `Pty <pty@${t.domain}>\r`],
    [/Subject/, 'Typed in a terminal\r'],
    [/Text body/, 'Hello from the prompt\r'],
  ];
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    screen += d;
    const next = answers[0];
    if (next && next[0].test(screen)) {
      answers.shift();
      screen = '';
      child.stdin.write(next[1]);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, screen);
  assert.equal(answers.length, 0, 'every prompt was shown');
  const list = await t.api('GET', `/v1/emails?recipient=pty@${t.domain}`);
  assert.equal(list.body.emails.length, 1);
  assert.equal(list.body.emails[0].subject, 'Typed in a terminal');
  assert.equal(list.body.emails[0].from, `Pty <pty@${t.domain}>`);
});

test('without a terminal the same command names the missing flag and exits 2', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'send', '--api-key', t.apiKey, '--base-url', t.url, '--to', `x@${t.domain}`], { cwd: root });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 2);
  assert.match(stderr, /--from/);
});
