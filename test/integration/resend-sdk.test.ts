// Applications written for Resend's official Node SDK (resend 6.x) run against the relay with one
// line changed, `baseUrl` pointed at the relay's /v1 (README "Already on Resend's SDK?"): send
// (tags in Resend's [{name, value}] form, reply-to, cc/bcc, an idempotency key), get and list.
// What the specification leaves out (batch sends, attachments, scheduling) is refused with an
// error that says so, and attachments point to SMTP submission.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Resend } from 'resend';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

let t: TestRelay;
let resend: Resend;
before(async () => {
  t = await startTestRelay();
  resend = new Resend(t.apiKey, { baseUrl: `${t.url}/v1` });
});
after(() => t.stop());

/** Resend's SDK hands back the relay's error body as it came: {"error": {code, message, details?}}. */
const relayError = (result: { error: unknown }) => (result.error as { error: { code: string; message: string; details?: Array<{ field: string; message: string }> } }).error;

// Resend's SDK logs the errors it returns; these tests look at the returned error instead.
const quietly = async <T>(run: () => Promise<T>): Promise<T> => {
  const original = console.error;
  console.error = () => undefined;
  try {
    return await run();
  } finally {
    console.error = original;
  }
};

describe("Resend's SDK against the relay", () => {
  test('send with tags, reply-to, cc, bcc and an idempotency key; get; list', async () => {
    const message = {
      from: `Acme <hello@${t.domain}>`,
      to: [`ada@${t.domain}`],
      cc: [`cc@${t.domain}`],
      bcc: [`bcc@${t.domain}`],
      replyTo: `support@${t.domain}`,
      subject: 'Welcome from Resend',
      html: '<p>Hello Ada</p>',
      text: 'Hello Ada',
      tags: [
        { name: 'category', value: 'welcome' },
        { name: 'plan', value: 'free' },
      ],
    };
    const sent = await resend.emails.send(message, { idempotencyKey: 'resend-welcome-ada' });
    assert.equal(sent.error, null, JSON.stringify(sent.error));
    const id = sent.data!.id;
    assert.match(id, /^em_/);

    const again = await resend.emails.send(message, { idempotencyKey: 'resend-welcome-ada' });
    assert.equal(again.data?.id, id, 'the same key and message answer the same email');

    const got = await resend.emails.get(id);
    assert.equal(got.error, null, JSON.stringify(got.error));
    const email = got.data as unknown as Record<string, any>;
    assert.equal(email.id, id);
    assert.deepEqual(email.tags, { category: 'welcome', plan: 'free' }, 'reads answer the object form');
    assert.equal(email.reply_to, `support@${t.domain}`);
    assert.deepEqual(email.cc, [`cc@${t.domain}`]);
    assert.ok(!JSON.stringify(email).includes(`bcc@${t.domain}`), 'BCC never shows');

    const listed = await resend.emails.list();
    assert.equal(listed.error, null, JSON.stringify(listed.error));
    const emails = (listed.data as unknown as { emails: Array<{ id: string }> }).emails;
    assert.ok(emails.some((e) => e.id === id));
  });

  test('a tag name given twice is refused (422), as is a reserved rr_ name', async () => {
    const twice = await quietly(() =>
      resend.emails.send({
        from: `hello@${t.domain}`,
        to: `ada@${t.domain}`,
        subject: 'Tags',
        text: 'x',
        tags: [
          { name: 'a', value: '1' },
          { name: 'a', value: '2' },
        ],
      }),
    );
    assert.equal(relayError(twice).code, 'validation_error');
    assert.equal(relayError(twice).details![0]!.field, 'tags[1].name');
    const reserved = await t.send({ tags: [{ name: 'rr_x', value: '1' }] });
    assert.equal(reserved.status, 422, reserved.text);
    assert.equal(reserved.body.error.details[0].field, 'tags.rr_x');
  });

  test('attachments are refused with a pointer to SMTP submission; scheduling and batches say they are not supported', async () => {
    const attached = await quietly(() =>
      resend.emails.send({
        from: `hello@${t.domain}`,
        to: `ada@${t.domain}`,
        subject: 'With a file',
        text: 'see attached',
        attachments: [{ filename: 'a.txt', content: Buffer.from('hello') }],
      }),
    );
    assert.equal(relayError(attached).code, 'validation_error');
    assert.match(relayError(attached).message, /attachments: attachments are not supported .*SMTP submission/);

    const scheduled = await quietly(() =>
      resend.emails.send({ from: `hello@${t.domain}`, to: `ada@${t.domain}`, subject: 'Later', text: 'x', scheduledAt: 'in 1 hour' }),
    );
    assert.match(relayError(scheduled).message, /scheduled_at: scheduled sends are not supported/);

    const batch = await quietly(() => resend.batch.send([{ from: `hello@${t.domain}`, to: `ada@${t.domain}`, subject: 'One', text: 'x' }]));
    assert.equal(relayError(batch).code, 'method_not_allowed');
    assert.match(relayError(batch).message, /batch sends are not supported/);
  });
});
