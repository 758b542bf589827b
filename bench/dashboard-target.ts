// The relay for the dashboard bench, in its own process so its RSS is its own.
// Usage (forked by bench/dashboard.ts): node --import tsx bench/dashboard-target.ts <dataDir> <messages>
// Fills the captured mail straight into the relay's tables (the raw message and its inbox entry,
// as the sink and the indexer would write them), then sends {url, smtpPort, adminToken} over IPC
// and answers {cmd: 'memory'} -> {rss} and {cmd: 'stop'} -> {rss}, then exits.
import { startRelay } from '../relay/app.js';
import { insertCapturedMessages } from '../relay/storage/captured.js';
import { insertInboxEntries } from '../relay/storage/inbox.js';

const [dataDir, countArg] = process.argv.slice(2);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const COUNT = Number(countArg);
const BATCH = 1000;
const SENDERS = ['Alice <alice@shop.test>', 'Billing <billing@acme.test>', 'Newsletter <news@weekly.test>', 'Support <help@desk.test>'];

const relay = await startRelay({ flags: { dataDir, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error' }, env: {} });
const { db } = relay.services;

const started = performance.now();
for (let done = 0; done < COUNT; done += BATCH) {
  await db.write(async (tx) => {
    const entries = [];
    for (let i = done; i < Math.min(COUNT, done + BATCH); i++) {
      const from = SENDERS[i % SENDERS.length]!;
      const address = from.replace(/.*</, '').replace('>', '');
      const subject = `Your receipt #${i}`;
      const text = `Thanks for your order ${i}. `.repeat(12);
      const raw = Buffer.from(`From: ${from}\r\nTo: user${i % 500}@example.test\r\nSubject: ${subject}\r\nDate: Tue, 24 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n`);
      const id = `msg_${String(i).padStart(26, '0')}`;
      const receivedAt = new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
      await insertCapturedMessages(tx, [{ id, envelopeFrom: address, headerFrom: from, envelopeTo: [`user${i % 500}@example.test`], subject, raw, emailId: null, projectId: null, receivedAt }]);
      const seq = (await tx.get<{ seq: number }>('SELECT seq FROM captured_messages WHERE id = ?', [id]))!.seq;
      entries.push({
        seq,
        id,
        from_name: from.replace(/ <.*/, ''),
        from_address: address,
        to: `user${i % 500}@example.test`,
        subject,
        snippet: text.slice(0, 160),
        size: raw.length,
        attachments: 0,
        email_id: null,
        project_id: null,
        received_at: receivedAt,
      });
    }
    // Half of them read, as an inbox in use would be.
    await insertInboxEntries(tx, entries);
    await tx.run('UPDATE inbox_entries SET read_at = received_at WHERE message_seq > ? AND message_seq % 2 = 0', [entries[0]!.seq - 1]);
  });
}
const fillMs = performance.now() - started;

process.send!({ url: relay.httpUrl, smtpPort: relay.smtpPort, adminToken: ADMIN_TOKEN, fillMs });
process.on('message', async (message: { cmd: 'memory' | 'stop' }) => {
  if (message.cmd === 'memory') {
    process.send!({ rss: process.memoryUsage().rss });
    return;
  }
  const rss = process.memoryUsage().rss;
  await relay.stop();
  process.send!({ rss }, () => process.exit(0));
});
