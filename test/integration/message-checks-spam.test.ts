// The spam check with a real spamd (Debian's spamassassin): GTUBE is scored as spam with the rule
// that fired; a spamd that is down makes the check unavailable, never the answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { startSpamd, type Spamd } from '../helpers/spamd.js';

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

let spamd: Spamd;
let t: TestRelay;
before(async () => {
  spamd = await startSpamd();
  t = await startTestRelay({ flags: { spamd: spamd.address } });
});
after(async () => {
  await t.stop();
  await spamd.stop();
});

async function deliver(text: string): Promise<string> {
  const to = `spam-${Math.random().toString(36).slice(2, 8)}@${t.domain}`;
  const res = await t.send({ to, subject: 'Spam check', text });
  assert.equal(res.status, 202, res.text);
  await t.waitForFinal(res.body.id);
  return (await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(to)}`)).body.messages[0].id;
}

test('GTUBE is scored as spam by a real spamd, with the rule and its description', async () => {
  const id = await deliver(`This is the GTUBE test:\n${GTUBE}\n`);
  const { spam } = (await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`)).body;
  assert.equal(spam.available, true, JSON.stringify(spam));
  assert.equal(spam.is_spam, true);
  assert.ok(spam.score >= 1000, String(spam.score));
  assert.equal(typeof spam.threshold, 'number');
  const gtube = spam.rules.find((r: any) => r.name === 'GTUBE');
  assert.ok(gtube, JSON.stringify(spam.rules));
  assert.match(gtube.description, /Generic Test for Unsolicited Bulk Email/);
  // Running the checks stored the badge: spam fails it, with the score as the reason.
  const [listed] = (await t.admin('GET', '/admin/v1/messages?limit=1')).body.messages;
  assert.equal(listed.id, id);
  assert.equal(listed.checks.verdict, 'fail');
  assert.match(listed.checks.reasons[0], /^spam: SpamAssassin scores \d/);
});

test('an ordinary message is not spam; with spamd down the check is unavailable and the rest answers', async () => {
  const id = await deliver('Hello Ada, your order has shipped.');
  const ok = (await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`)).body.spam;
  assert.equal(ok.available, true);
  assert.equal(ok.is_spam, false);
  await spamd.stop();
  const down = await t.admin('GET', `/admin/v1/messages/${id}/checks?links=0`);
  assert.equal(down.status, 200, down.text);
  assert.equal(down.body.spam.available, false);
  assert.match(down.body.spam.message, /unavailable/);
  assert.equal(down.body.authentication.dkim[0].result, 'pass');
});
