// The "Testing a sign-up flow" example of README.md and sdk/README.md, run as written: the block is
// copied to a file of its own and run with `node --test` against a real relay and a small sign-up
// application that sends its confirmation mail through the relay with the SDK.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Raven } from 'raven-email-sdk';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function example(readme: string): string {
  const text = readFileSync(join(root, readme), 'utf8');
  const m = /<!-- signup-example[^>]*-->\n```js\n([\s\S]*?)```/.exec(text);
  assert.ok(m, `${readme} has the sign-up example`);
  return m[1]!;
}

let t: TestRelay;
let app: http.Server;
let appUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'raven-readme-'));

before(async () => {
  t = await startTestRelay();
  const raven = new Raven({ apiKey: t.apiKey, baseUrl: t.url });
  const tokens = new Set<string>();
  // The application under test: POST /signup mails a confirmation link, GET /confirm takes it.
  app = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', appUrl);
    if (req.method === 'POST' && url.pathname === '/signup') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', async () => {
        const { email } = JSON.parse(body) as { email: string };
        const token = randomBytes(12).toString('hex');
        tokens.add(token);
        await raven.emails.send({
          from: `App <app@${t.domain}>`,
          to: email,
          subject: 'Please confirm your address',
          html: `<p>Welcome!</p><p><a href="${appUrl}/confirm?token=${token}">Confirm your address</a></p>`,
        });
        res.writeHead(201).end();
      });
      return;
    }
    res.writeHead(url.pathname === '/confirm' && tokens.has(url.searchParams.get('token') ?? '') ? 200 : 404).end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  // The example imports raven-email-sdk as an application would: from its node_modules.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
});

after(async () => {
  await new Promise((resolve) => app?.close(resolve));
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the example is the same in both READMEs, and passes as written', async () => {
  const code = example('README.md');
  assert.equal(example('sdk/README.md'), code);
  writeFileSync(join(dir, 'signup.test.mjs'), code);
  const env = { PATH: process.env.PATH ?? '', HOME: dir, APP_URL: appUrl, RAVEN_ADMIN_TOKEN: t.adminToken, RAVEN_BASE_URL: t.url };
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(process.execPath, ['--test', 'signup.test.mjs'], { cwd: dir, env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  assert.equal(run.code, 0, run.output);
  assert.match(run.output, /# pass 1/);
});
