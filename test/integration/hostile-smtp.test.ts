// Hostile input on the SMTP sink: each case gets the proper SMTP reply (what smtp-server and the
// sink truly answer), and afterwards the relay still captures a normal message.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { openRawSmtp, type RawSmtp } from '../helpers/smtp-raw.js';
import { plainMessage, submitOnce } from '../helpers/submission.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const LIMIT = 64 * 1024;
const SENDER = 'app@elsewhere.test';
let serial = 0;
/** A fresh recipient per case, so `?to=` finds only that case's messages. */
const address = (label: string) => `${label}-${++serial}@sink.test`;

const connections = new Set<RawSmtp>();
afterEach(() => {
  for (const c of connections) c.destroy();
  connections.clear();
});

async function open(t: TestRelay): Promise<RawSmtp> {
  const c = await openRawSmtp(t.relay.smtpPort, t.relay.smtpHost);
  connections.add(c);
  assert.match(await c.reply(), /^220 /);
  return c;
}

/** EHLO, MAIL FROM and RCPT TO, each expected to be accepted. */
async function envelope(c: RawSmtp, recipients: string[]): Promise<void> {
  assert.match(await c.command('EHLO client.test'), /^250[ -]/);
  assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^250 /);
  for (const rcpt of recipients) assert.match(await c.command(`RCPT TO:<${rcpt}>`), /^250 /);
}

/** Sends DATA, the message (ending in CRLF) and the final dot; returns the reply to the message. */
async function data(c: RawSmtp, message: string | Buffer): Promise<string> {
  assert.match(await c.command('DATA'), /^354 /);
  await c.write(message);
  await c.write('.\r\n');
  return c.reply();
}

async function captured(t: TestRelay, to: string): Promise<any[]> {
  const res = await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(to)}`);
  assert.equal(res.status, 200, res.text);
  return res.body.messages;
}

/** The stored bytes of a captured message (read as bytes: the text helpers would decode them). */
async function rawOf(t: TestRelay, id: string): Promise<Buffer> {
  const res = await fetch(`${t.url}/admin/v1/messages/${id}/raw`, { headers: { authorization: `Bearer ${t.adminToken}` } });
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

const queuedId = (reply: string) => /^250 .*queued as (msg_\w+)/.exec(reply)?.[1];

/** The relay still serves: an ordinary client's message is captured. */
async function assertStillServing(t: TestRelay): Promise<void> {
  const to = address('normal');
  const transport = nodemailer.createTransport({ host: t.relay.smtpHost, port: t.relay.smtpPort, ignoreTLS: true });
  try {
    await transport.sendMail({ from: SENDER, to, subject: 'still serving', text: 'hello' });
  } finally {
    transport.close();
  }
  const messages = await captured(t, to);
  assert.equal(messages.length, 1);
  assert.equal(messages[0].subject, 'still serving');
}

/** A message of exactly `size` bytes: a header, then 78-byte lines (none starting with a dot). */
function messageOfSize(size: number): string {
  const head = 'Subject: sized\r\n\r\n';
  const line = `${'x'.repeat(76)}\r\n`;
  const room = size - head.length - 2; // the last line's CRLF
  const message = head + line.repeat(Math.floor(room / line.length)) + `${'z'.repeat(room % line.length)}\r\n`;
  assert.equal(message.length, size);
  return message;
}

describe('the sink with a small message limit', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ overrides: (config) => (config.limits.smtpMaxMessageBytes = LIMIT) });
  });
  after(() => t.stop());

  test('HELO, MAIL FROM and RCPT TO lines over 16 KiB are refused 421 and the connection closed', async () => {
    const long = (prefix: string, suffix: string) => prefix + 'a'.repeat(16 * 1024 + 1 - prefix.length - suffix.length) + suffix;
    const cases = [
      { before: [], line: long('HELO ', '.test') },
      { before: ['EHLO client.test'], line: long('MAIL FROM:<', '@x.test>') },
      { before: ['EHLO client.test', `MAIL FROM:<${SENDER}>`], line: long('RCPT TO:<', '@x.test>') },
    ];
    for (const { before: setup, line } of cases) {
      assert.equal(line.length, 16 * 1024 + 1);
      const c = await open(t);
      for (const command of setup) assert.match(await c.command(command), /^250[ -]/);
      assert.match(await c.command(line), /^421 .*Command line too long/);
      await c.closed;
    }
    await assertStillServing(t);
  });

  test('a line with no CRLF that keeps growing is cut off at 16 KiB, not buffered', async () => {
    const c = await open(t);
    const reply = c.reply();
    let answered: string | undefined;
    reply.then((r) => (answered = r), () => undefined);
    // An unbounded buffer would never answer: the cap (far past 16 KiB) turns that into a failure.
    const cap = 8 * 1024 * 1024;
    const chunk = Buffer.alloc(1024, 'A');
    let written = 0;
    while (answered === undefined && !c.isClosed() && written < cap) {
      await c.write(chunk);
      written += chunk.length;
      await new Promise((r) => setImmediate(r)); // let the server read what was written
    }
    assert.match(await reply, /^421 .*Command line too long/);
    assert.ok(written < cap, `the server still read after ${written} bytes on one line`);
    await c.closed;
    await assertStillServing(t);
  });

  test('DATA just over the limit is refused 552 while streaming; nothing of it is stored', async () => {
    const over = address('oversized');
    const fits = address('fits');
    const c = await open(t);
    await envelope(c, [over]);
    assert.match(await data(c, messageOfSize(LIMIT + 1)), /^552 5\.3\.4 /);
    // The session is still usable: a message of exactly the limit is taken on the same connection.
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^250 /);
    assert.match(await c.command(`RCPT TO:<${fits}>`), /^250 /);
    assert.ok(queuedId(await data(c, messageOfSize(LIMIT))));
    assert.deepEqual(await captured(t, over), []);
    const [kept] = await captured(t, fits);
    assert.equal(kept.size, LIMIT);
    await assertStillServing(t);
  });

  test('MAIL FROM with SIZE= over the limit is refused 552 up front', async () => {
    const c = await open(t);
    assert.match(await c.command('EHLO client.test'), new RegExp(`^250[- ]SIZE ${LIMIT}$`, 'm'));
    assert.match(await c.command(`MAIL FROM:<${SENDER}> SIZE=${LIMIT + 1}`), /^552 /);
    assert.match(await c.command(`RCPT TO:<${address('sized')}>`), /^503 /, 'the refused MAIL opened no transaction');
    assert.match(await c.command(`MAIL FROM:<${SENDER}> SIZE=${LIMIT}`), /^250 /);
    await assertStillServing(t);
  });

  describe('SMTP smuggling: a bare-LF dot does not end DATA', () => {
    const sequences = { 'LF.LF': '\n.\n', 'CRLF.LF': '\r\n.\n', 'LF.CRLF': '\n.\r\n' };
    for (const [name, sequence] of Object.entries(sequences)) {
      for (const split of [false, true]) {
        test(`${name}${split ? ', split after the dot' : ''}: one message, the smuggled commands are its body`, async () => {
          const legit = address('legit');
          const victim = address('victim');
          const head = `Subject: smuggling ${name}\r\n\r\nfirst part`;
          const smuggled = `MAIL FROM:<evil@attacker.test>\r\nRCPT TO:<${victim}>\r\nDATA\r\nSubject: smuggled\r\n\r\nsecond part`;
          const c = await open(t);
          await envelope(c, [legit]);
          assert.match(await c.command('DATA'), /^354 /);
          const dot = sequence.indexOf('.') + 1;
          const pieces = split ? [head + sequence.slice(0, dot), sequence.slice(dot) + smuggled] : [head + sequence + smuggled];
          for (const piece of pieces) {
            await c.write(piece);
            await new Promise((r) => setImmediate(r));
          }
          await c.write('\r\n.\r\nQUIT\r\n');
          // A server fooled by the bare-LF dot would answer the smuggled MAIL, RCPT and DATA here.
          assert.ok(queuedId(await c.reply()));
          assert.match(await c.reply(), /^221 /);
          assert.deepEqual(await captured(t, victim), []);
          const messages = await captured(t, legit);
          assert.equal(messages.length, 1);
          assert.equal((await rawOf(t, messages[0].id)).toString('latin1'), `${head}${sequence}${smuggled}\r\n`);
          await assertStillServing(t);
        });
      }
    }
  });

  test('NUL bytes in HELO, MAIL FROM, RCPT TO and parameters are refused 501; nothing captured', async () => {
    const victim = address('nul');
    const [local, domain] = victim.split('@');
    const c = await open(t);
    assert.match(await c.command('EHLO client\0.test'), /^501 /);
    assert.match(await c.command('EHLO client.test'), /^250[ -]/);
    assert.match(await c.command('MAIL FROM:<app\0evil@elsewhere.test>'), /^501 /);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>\0`), /^501 /);
    assert.match(await c.command(`MAIL FROM:<${SENDER}> ENVID=a\0b`), /^501 /);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^250 /);
    assert.match(await c.command(`RCPT TO:<${local}\0@${domain}>`), /^501 /);
    assert.match(await c.command(`RCPT TO:<${victim}\0>`), /^501 /);
    assert.match(await c.command('DATA'), /^503 /, 'no recipient was accepted');
    assert.deepEqual(await captured(t, victim), []);
    await assertStillServing(t);
  });

  test('STARTTLS pipelined with a transaction: refused as unknown, the rest runs in order', async () => {
    const to = address('pipelined');
    const c = await open(t);
    await c.write(`EHLO client.test\r\nSTARTTLS\r\nMAIL FROM:<${SENDER}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
    const ehlo = await c.reply();
    assert.match(ehlo, /^250-PIPELINING$/m);
    assert.doesNotMatch(ehlo, /STARTTLS/, 'the default sink has no TLS to offer');
    assert.match(await c.reply(), /^50[02] /);
    assert.match(await c.reply(), /^250 /);
    assert.match(await c.reply(), /^250 /);
    assert.match(await c.reply(), /^354 /);
    await c.write('Subject: pipelined\r\n\r\nbody\r\n.\r\nQUIT\r\n');
    assert.ok(queuedId(await c.reply()));
    assert.match(await c.reply(), /^221 /);
    await c.closed;
    const messages = await captured(t, to);
    assert.equal(messages.length, 1);
    assert.equal(messages[0].subject, 'pipelined');
    await assertStillServing(t);
  });

  test('8-bit and invalid UTF-8 in headers: captured byte for byte, readable through the admin API', async () => {
    const to = address('eightbit');
    const message = Buffer.concat([
      Buffer.from('Subject: caf'),
      Buffer.from([0xe9, 0x20, 0xff, 0xfe, 0x20, 0xc3, 0x28]),
      Buffer.from('\r\nX-Binary: '),
      Buffer.from([0x80, 0x81, 0x00, 0x7f]),
      Buffer.from('\r\n\r\nbody '),
      Buffer.from([0xe9]),
      Buffer.from('\r\n'),
    ]);
    const c = await open(t);
    await envelope(c, [to]);
    assert.ok(queuedId(await data(c, message)));
    const [listed] = await captured(t, to);
    assert.match(listed.subject, /^caf\uFFFD \uFFFD\uFFFD \uFFFD\($/);
    assert.deepEqual(await rawOf(t, listed.id), message);
    const detail = await t.admin('GET', `/admin/v1/messages/${listed.id}`);
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.headers[1][0], 'X-Binary');
    await assertStillServing(t);
  });

  test('a message with no headers at all, and an empty one, are captured as sent', async () => {
    for (const message of ['just a body line and no header block\r\n', '']) {
      const to = address('headerless');
      const c = await open(t);
      await envelope(c, [to]);
      assert.match(await c.command('DATA'), /^354 /);
      await c.write(`${message}.\r\n`);
      assert.ok(queuedId(await c.reply()));
      const [listed] = await captured(t, to);
      assert.equal(listed.subject, null);
      assert.equal(listed.size, message.length);
      assert.equal((await rawOf(t, listed.id)).toString('latin1'), message);
      const detail = await t.admin('GET', `/admin/v1/messages/${listed.id}`);
      assert.equal(detail.status, 200, detail.text);
      assert.deepEqual(detail.body.headers, []);
    }
    await assertStillServing(t);
  });

  test('commands out of order are refused 503', async () => {
    const c = await open(t);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^503 .*HELO\/EHLO first/);
    assert.match(await c.command('EHLO client.test'), /^250[ -]/);
    assert.match(await c.command(`RCPT TO:<${address('early')}>`), /^503 .*need MAIL/);
    assert.match(await c.command('DATA'), /^503 .*need RCPT/);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^250 /);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^503 .*nested MAIL/);
    assert.match(await c.command('DATA'), /^503 .*need RCPT/);
    await assertStillServing(t);
  });

  test('unbounded RCPT TO list (bug: no recipient cap): past 100 recipients the sink answers 452', async () => {
    const recipients = Array.from({ length: 100 }, () => address('many'));
    const c = await open(t);
    await envelope(c, recipients);
    assert.match(await c.command(`RCPT TO:<${address('one-too-many')}>`), /^452 /);
    assert.match(await c.command(`RCPT TO:<${recipients[0]}>`), /^250 /, 'a repeated recipient is not a new one');
    assert.ok(queuedId(await data(c, 'Subject: many\r\n\r\nbody\r\n')));
    const [listed] = await captured(t, recipients[99]!);
    assert.deepEqual(listed.to, recipients);
    await assertStillServing(t);
  });
});

describe('the sink with three clients at most', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({ overrides: (config) => (config.limits.smtpMaxClients = 3) });
  });
  after(() => t.stop());

  test('a fourth connection is refused 421; the three others still work', async () => {
    const [first, second, third] = [await open(t), await open(t), await open(t)];
    const extra = await openRawSmtp(t.relay.smtpPort, t.relay.smtpHost);
    connections.add(extra);
    assert.match(await extra.reply(), /^421 .*Too many connected clients/);
    await extra.closed;
    for (const c of [first!, second!, third!]) {
      const to = address('crowded');
      await envelope(c, [to]);
      assert.ok(queuedId(await data(c, 'Subject: crowded\r\n\r\nbody\r\n')));
      assert.equal((await captured(t, to)).length, 1);
      assert.match(await c.command('QUIT'), /^221 /);
      await c.closed;
    }
    await assertStillServing(t);
  });
});

describe('the sink with a short socket time-out', () => {
  const TIMEOUT_MS = 2_000;
  const SESSION_MS = 5_000;
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({
      overrides: (config) => {
        config.limits.smtpSocketTimeoutMs = TIMEOUT_MS;
        config.limits.smtpMaxSessionMs = SESSION_MS;
      },
    });
  });
  after(() => t.stop());

  /** Waits two time-outs, or less if the server closes the connection meanwhile. */
  const idle = (c: RawSmtp) => {
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((r) => (timer = setTimeout(r, TIMEOUT_MS * 2)));
    return Promise.race([c.closed, wait]).finally(() => clearTimeout(timer));
  };

  test('an idle client is closed by the time-out', async () => {
    const c = await open(t);
    assert.match(await c.reply(), /^421 .*Timeout/);
    await c.closed;
    await assertStillServing(t);
  });

  test('a client trickling one byte per two time-outs is closed before its line is complete', async () => {
    const c = await open(t);
    const line = 'EHLO trickle.test\r\n';
    let sent = 0;
    while (!c.isClosed() && sent < line.length) {
      await c.write(line[sent++]!);
      await idle(c);
    }
    assert.ok(sent < line.length, 'the whole line got through');
    assert.match(await c.reply(), /^421 .*Timeout/);
    await assertStillServing(t);
  });

  test('a client trickling just under the idle time-out is closed at the session deadline (bug: held a slot for ever)', async () => {
    const c = await open(t);
    let sent = 0;
    const guard = Date.now() + SESSION_MS * 6;
    // One NOOP byte every half time-out: never idle, never done.
    while (!c.isClosed() && Date.now() < guard) {
      await c.write('NOOP\r\n'[sent++ % 6]!).catch(() => undefined);
      await new Promise((r) => setTimeout(r, TIMEOUT_MS / 2));
    }
    assert.ok(c.isClosed(), 'the session outlived its deadline');
    await assertStillServing(t);
  });

  test('a client that stops in the middle of DATA is closed and nothing is captured', async () => {
    const to = address('stalled');
    const c = await open(t);
    await envelope(c, [to]);
    assert.match(await c.command('DATA'), /^354 /);
    await c.write('Subject: stalled\r\n\r\nhalf a mess');
    assert.match(await c.reply(), /^421 .*Timeout/);
    await c.closed;
    assert.deepEqual(await captured(t, to), []);
    await assertStillServing(t);
  });
});

describe('text neither backend can store, in captured mail (issue 20)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t.stop());

  /** Waits until the inbox indexer has an entry for the message (it indexes off the sink's path). */
  async function inboxEntry(id: string): Promise<any> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await t.admin('GET', '/admin/v1/inbox?limit=200');
      assert.equal(res.status, 200, res.text);
      const entry = res.body.messages.find((m: any) => m.id === id);
      if (entry) return entry;
      assert.ok(Date.now() < deadline, `message ${id} never reached the inbox`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function capture(to: string, message: Buffer | string): Promise<any> {
    const c = await open(t);
    await envelope(c, [to]);
    const reply = await data(c, message);
    assert.ok(queuedId(reply), `captured, not refused: ${reply}`);
    const [listed] = await captured(t, to);
    assert.ok(listed, 'listed under its recipient');
    assert.deepEqual(await rawOf(t, listed.id), Buffer.isBuffer(message) ? message : Buffer.from(message, 'latin1'), 'the raw bytes as sent');
    return listed;
  }

  test('regression: a Subject carrying a NUL byte is captured (it was 451 4.3.0 on PostgreSQL), as U+FFFD', async () => {
    const to = address('nul-subject');
    const listed = await capture(to, Buffer.from('From: "Ann\0Lee" <ann@elsewhere.test>\r\nSubject: pay\0day\r\n\r\nbody\r\n'));
    assert.equal(listed.subject, 'pay\uFFFDday');
    assert.equal(listed.header_from, '"Ann\uFFFDLee" <ann@elsewhere.test>');
    const entry = await inboxEntry(listed.id);
    assert.equal(entry.subject, 'pay\uFFFDday');
    const detail = await t.admin('GET', `/admin/v1/messages/${listed.id}`);
    assert.equal(detail.status, 200, detail.text);
  });

  test('regression: a NUL decoded from an encoded word (Subject, From name) is captured and indexed', async () => {
    const to = address('nul-encoded');
    const nul = Buffer.from('a\0b').toString('base64');
    const listed = await capture(to, `From: =?utf-8?B?${nul}?= <ann@elsewhere.test>\r\nSubject: =?utf-8?B?${nul}?= =?utf-8?Q?c=00d?=\r\n\r\nbody\r\n`);
    assert.equal(listed.subject, 'a\uFFFDbc\uFFFDd');
    const entry = await inboxEntry(listed.id);
    assert.equal(entry.from_name, 'a\uFFFDb');
  });

  test('regression: a NUL in the body and a snippet cut inside a surrogate pair reach the inbox (the indexer failed on PostgreSQL)', async () => {
    const to = address('nul-body');
    // The snippet is the first 160 UTF-16 units: the emoji straddles the cut.
    const head = 'a NUL \0 then ';
    const text = `${head}${'x'.repeat(159 - head.length)}\u{1F600} after`;
    const listed = await capture(to, Buffer.from(`Subject: body\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n`, 'utf8'));
    const entry = await inboxEntry(listed.id);
    assert.equal(entry.snippet, `a NUL \uFFFD then ${'x'.repeat(159 - head.length)}\uFFFD`);
    const search = await t.admin('GET', '/admin/v1/inbox?q=subject:body');
    assert.ok(search.body.messages.some((m: any) => m.id === listed.id));
    // The message view still shows what was sent.
    const detail = await t.admin('GET', `/admin/v1/messages/${listed.id}`);
    assert.equal(detail.body.text.trim(), text);
  });

  test('a NUL-bearing message in the same group commit as others fails none of them', async () => {
    const recipients = Array.from({ length: 6 }, (_, i) => address(`group-${i}`));
    const clients = await Promise.all(recipients.map(() => open(t)));
    await Promise.all(clients.map((c, i) => envelope(c, [recipients[i]!])));
    const replies = await Promise.all(clients.map((c, i) => data(c, `Subject: ${i % 2 ? 'bad\0' : 'good'} ${i}\r\n\r\nbody\r\n`)));
    for (const reply of replies) assert.ok(queuedId(reply), reply);
    for (const to of recipients) assert.equal((await captured(t, to)).length, 1, to);
  });

  test('envelope addresses past RFC 5321 (a long local part, a long domain) are refused 501 before anything is stored', async () => {
    // Random letters: PostgreSQL would compress a repeated one below its index row limit.
    const letters = (n: number) => Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');
    const longDomain = Array.from({ length: 50 }, () => letters(60)).join('.');
    const c = await open(t);
    assert.match(await c.command('EHLO client.test'), /^250[ -]/);
    for (const long of [`${letters(3000)}@sink.test`, `a@${longDomain}.test`]) assert.match(await c.command(`MAIL FROM:<${long}>`), /^501 /);
    assert.match(await c.command(`MAIL FROM:<${SENDER}>`), /^250 /);
    for (const long of [`${letters(3000)}@sink.test`, `a@${longDomain}.test`]) assert.match(await c.command(`RCPT TO:<${long}>`), /^501 /);
    await assertStillServing(t);
  });
});

describe('text neither backend can store, in SMTP submission (issue 20)', () => {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay();
  });
  after(() => t.stop());

  const message = (subject: string, extra: string[] = [], body = 'body') =>
    plainMessage({ from: `App <app@${t.domain}>`, to: `user@${t.domain}`, subject, extra, body });

  test('a NUL in the Subject (raw or encoded) is 550 5.6.0 validation_error, the same on both backends', async () => {
    const nul = Buffer.from('a\0b').toString('base64');
    for (const given of [message('pay\0day'), message(`=?utf-8?B?${nul}?=`)]) {
      const reply = await submitOnce(t, t.apiKey, [`user@${t.domain}`], given);
      assert.match(reply, /^550 5\.6\.0 validation_error: .*subject/, `${JSON.stringify(given)}: ${reply}`);
    }
  });

  test('an Idempotency-Key header with a NUL or past 128 characters is 550 5.6.0 validation_error, stored nowhere', async () => {
    for (const key of ['a\0b', 'k'.repeat(129)]) {
      const reply = await submitOnce(t, t.apiKey, [`user@${t.domain}`], message('keyed', [`Idempotency-Key: ${key}`]));
      assert.match(reply, /^550 5\.6\.0 validation_error: /, `${JSON.stringify(key.slice(0, 10))}: ${reply}`);
    }
  });

  test('a NUL in the From display name is not kept in the email\'s from (the address parser drops it)', async () => {
    const reply = await submitOnce(t, t.apiKey, [`user@${t.domain}`], plainMessage({ from: `"Ap\0p" <app@${t.domain}>`, to: `user@${t.domain}` }));
    const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(reply)?.[1];
    assert.ok(id, reply);
    const email = await t.api('GET', `/v1/emails/${id}`);
    assert.equal(email.status, 200, email.text);
    assert.ok(!email.body.from.includes('\u0000'), email.body.from);
  });

  test('a NUL in another header or the body is kept as submitted: queued, delivered and captured byte for byte', async () => {
    const given = message('kept', ['X-Order: 4\x002'], 'line with a NUL \0 in it');
    const reply = await submitOnce(t, t.apiKey, [`user@${t.domain}`], given);
    const id = /^250 2\.0\.0 (em_\w+) queued$/.exec(reply)?.[1];
    assert.ok(id, reply);
    const email = await t.waitForFinal(id);
    assert.equal(email.status, 'delivered');
    const [captured] = (await t.admin('GET', `/admin/v1/messages?to=${encodeURIComponent(`user@${t.domain}`)}`)).body.messages;
    const raw = await fetch(`${t.url}/admin/v1/messages/${captured.id}/raw`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    assert.ok(Buffer.from(await raw.arrayBuffer()).includes(Buffer.from('X-Order: 4\x002\r\n')), 'the header as submitted');
  });
});
