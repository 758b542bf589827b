// ravenctl send in a real pseudo-terminal (util-linux `script`, part of every Debian system):
// missing fields are asked for and checked as a person types them, the body is written in an
// editor, and the email is sent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ravenctl } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { inTerminal } from '../helpers/terminal.js';

const dir = mkdtempSync(path.join(tmpdir(), 'ravenctl-prompts-'));
let t: TestRelay;
before(async () => {
  t = await startTestRelay();
});
after(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

// A prompt that never shows would leave the child waiting for input: the time-out turns that into a failure.
test('send asks for from, subject and body in a terminal, checks each answer as given, and sends', { timeout: 120_000 }, async (context) => {
  // The "editor": writes a multi-line body into the file it is given, as a person would.
  const editor = path.join(dir, 'editor.sh');
  writeFileSync(editor, `#!/bin/sh\nprintf 'Hello Ada,\\n\\nwritten in an editor.\\n' > "$1"\n`, { mode: 0o755 });
  const answers: Array<[RegExp, string]> = [
    [/From \(/, 'not-an-address\r'],
    // Ctrl-U clears what was typed, as a person fixing a refused answer would.
    [/must be an address or Name <address>/, `\u0015Pty <pty@${t.domain}>\r`], // the relay's own message
    [/Subject/, 'Typed in a terminal\r'],
    [/Body/, '\r'], // the first choice: text
    [/Text body, written in your editor/, '\r'], // Enter opens the editor
  ];
  const run = await inTerminal(
    ['send', '--api-key', t.apiKey, '--base-url', t.url, '--to', `pty@${t.domain}`],
    { EDITOR: editor, TMPDIR: process.env.TMPDIR },
    answers,
    context.signal,
  );
  assert.equal(run.code, 0, run.screen);
  assert.equal(run.unanswered, 0, 'every prompt was shown');
  const list = await t.api('GET', `/v1/emails?recipient=pty@${t.domain}`);
  assert.equal(list.body.emails.length, 1);
  assert.equal(list.body.emails[0].subject, 'Typed in a terminal');
  assert.equal(list.body.emails[0].from, `Pty <pty@${t.domain}>`);
  const final = await t.waitForFinal(list.body.emails[0].id);
  const captured = await t.admin('GET', `/admin/v1/messages?to=pty@${t.domain}`);
  const message = await t.admin('GET', `/admin/v1/messages/${captured.body.messages[0].id}`);
  assert.equal(final.status, 'delivered');
  assert.equal(message.body.text.trim(), 'Hello Ada,\n\nwritten in an editor.');
});

test('without a terminal the same command names the missing flag and exits 2', async () => {
  const { code, stderr } = await ravenctl(['send', '--api-key', t.apiKey, '--base-url', t.url, '--to', `x@${t.domain}`]);
  assert.equal(code, 2);
  assert.match(stderr, /--from/);
});
