// Whole delivery on a worker thread (relay/delivery/thread-delivery.ts). The threads are ended at a
// chosen point of a real SMTP conversation with a server of the test's own: a thread that dies
// before the message's bytes start to go sent nothing, and the worker delivers the message itself,
// once; one that dies after may have delivered it: delivery_unknown, never sent again.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { workerThreads } from '../../relay/threads/work.js';
import { startHarness, type Harness } from '../helpers/delivery-harness.js';

describe('delivery on a worker thread', () => {
  let h: Harness;
  let server: SMTPServer;
  /** The recipient of every message the server took in whole. */
  const received: string[] = [];
  let onRcpt: (address: string) => Promise<void> = async () => {};
  let onMessage: (address: string) => Promise<void> = async () => {};
  // A bound, not a speed: each ending of the threads means booting new ones, seconds on a loaded machine.
  const FINAL_WITHIN_MS = 60_000;

  before(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo(address, _session, callback) {
        onRcpt(address.address).then(() => callback(), callback);
      },
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          const to = session.envelope.rcptTo[0]!.address;
          received.push(to);
          onMessage(to).then(() => callback(), callback);
        });
      },
    });
    // A connection reset by a thread that was ended: expected here.
    server.on('error', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    h = await startHarness({ target: { host: '127.0.0.1', port: (server.server.address() as AddressInfo).port } });
  });
  after(async () => {
    await h?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a thread that dies before the message goes: the worker delivers it itself, once', async () => {
    const to = `early@${h.domain}`;
    let ended = false;
    onRcpt = async (address) => {
      if (address !== to || ended) return;
      ended = true;
      await workerThreads.close();
    };
    const id = await h.insertEmail({ to: [to] });
    const email = await h.waitForTerminal(id, FINAL_WITHIN_MS);
    assert.ok(ended, 'the threads were ended mid-conversation');
    assert.equal(email.status, 'delivered');
    assert.deepEqual(received.filter((a) => a === to), [to], 'taken in once');
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.sent', 'email.delivered']);
  });

  test('a thread that dies once the message went: delivery_unknown, never sent again', async () => {
    const to = `late@${h.domain}`;
    onMessage = async (address) => {
      if (address === to) await workerThreads.close();
    };
    const id = await h.insertEmail({ to: [to] });
    const email = await h.waitForTerminal(id, FINAL_WITHIN_MS);
    assert.equal(email.status, 'delivery_unknown');
    assert.deepEqual((await h.events(id)).map((e) => e.type), ['email.delivery_unknown']);
    // However far time moves, it is not sent again: not claimed by the time a later email is delivered.
    h.clock.advance(2 * 86_400);
    await h.passBarrier();
    assert.deepEqual(received.filter((a) => a === to), [to], 'taken in once');
    assert.deepEqual((await h.recipients(id)).map((r) => r.status), ['delivery_unknown']);
    assert.equal(workerThreads.stats().broken, false);
  });
});
