// What a webhook attempt keeps of the receiver's answer (relay/webhooks/answer-excerpt.ts).
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { ANSWER_EXCERPT_BYTES, excerptText, MAX_ANSWER_BYTES, readAnswerExcerpt } from '../../relay/webhooks/answer-excerpt.js';

test('a multi-byte character cut at the end is left out, not shown as U+FFFD', () => {
  const euro = Buffer.from('€', 'utf8'); // 3 bytes
  assert.equal(excerptText(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)])), 'ab');
  assert.equal(excerptText(Buffer.concat([Buffer.from('ab'), euro])), 'ab€');
});

test('NUL and bytes that are not UTF-8 become U+FFFD (PostgreSQL text holds no NUL)', () => {
  assert.equal(excerptText(Buffer.from([0x61, 0x00, 0xc3, 0x28, 0x62])), 'a\ufffd\ufffd(b');
});

test('reads the first 1,024 bytes across chunks and says when there was more', async () => {
  const chunks = [Buffer.alloc(600, 'x'), Buffer.alloc(600, 'y')];
  const read = await readAnswerExcerpt(Readable.from(chunks));
  assert.equal(read.text, 'x'.repeat(600) + 'y'.repeat(ANSWER_EXCERPT_BYTES - 600));
  assert.equal(read.truncated, true);
  const exact = await readAnswerExcerpt(Readable.from([Buffer.alloc(ANSWER_EXCERPT_BYTES, 'z')]));
  assert.equal(exact.truncated, false);
});

test('an answer past the read limit is cut off (its stream destroyed), a failing one keeps what came', async () => {
  let pulled = 0;
  const endless = new Readable({
    read() {
      pulled += 16 * 1024;
      this.push(Buffer.alloc(16 * 1024, 'e'));
    },
  });
  const read = await readAnswerExcerpt(endless);
  assert.equal(read.truncated, true);
  assert.ok(pulled <= MAX_ANSWER_BYTES + 64 * 1024, `read ${pulled} bytes`);
  assert.equal(endless.destroyed, true);

  const failing = new Readable({ read() {} });
  failing.push(Buffer.from('partial'));
  setImmediate(() => failing.destroy(new Error('socket hang up')));
  assert.deepEqual(await readAnswerExcerpt(failing), { text: 'partial', truncated: false });
});
