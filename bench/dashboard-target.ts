// The relay for the dashboard and search benches, in its own process so its RSS is its own.
// Usage (forked by bench/dashboard.ts and bench/inbox-search.ts):
//   node --import tsx bench/dashboard-target.ts <dataDir> <messages> [databaseUrl]
// Fills the captured mail straight into the relay's tables, 1,000 messages a transaction, through
// the relay's own storage functions: insertCapturedMessages (the sink's rows: the raw message and
// its recipients) and insertInboxEntries (the indexer's: the entry, its tags and its short-term
// grams, in multi-row statements), with the search terms relay/inbox/search-terms.ts computes;
// only the parsing of each message (mailparser, the indexer's) is skipped, its results written
// as the generator knows them. On SQLite in the data directory or on the PostgreSQL database given, then sends {url, smtpPort, adminToken, fillMs, fillCpuMs}
// over IPC and answers {cmd: 'memory'} -> {rss}, {cmd: 'cpu'} -> process.cpuUsage() and
// {cmd: 'stop'} -> {rss}, then exits; {cmd: 'grams', variant, count} rewrites the short-term grams
// of the newest `count` entries (see rewriteGrams) -> {count} once committed.
//
// The mail, message i of n, one second apart from 2026-11-01T00:00:00Z: a quarter from each of
// four senders; to one of 500 users; the subject `Your receipt #i`; Message-ID
// `<receipt-i@shop.test>`; X-Tags `receipt, plan=pro` (a third), `receipt, plan=free` (a third)
// or `newsletter` (a third), and `vip` on ten messages; a quarter in each of the projects
// prj_bench_a and prj_bench_b, the rest in none; every hundredth with a 20 KB attachment;
// every other one read.
import pg from 'pg';
import { startRelay } from '../relay/app.js';
import { searchTermsOf } from '../relay/inbox/search-terms.js';
import { insertCapturedMessages } from '../relay/storage/captured.js';
import { freeTextGramsOf, insertInboxEntries, replaceShortGrams, shortGramsOf, type NewInboxEntry } from '../relay/storage/inbox.js';
import { inValues } from '../relay/storage/rows.js';

const [dataDir, countArg, database] = process.argv.slice(2);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const COUNT = Number(countArg);
const BATCH = 1000;
const SENDERS = ['Alice <alice@shop.test>', 'Billing <billing@acme.test>', 'Newsletter <news@weekly.test>', 'Support <help@desk.test>'];
const PROJECTS = ['prj_bench_a', 'prj_bench_b', null, null];
const ATTACHMENT = Buffer.alloc(15_000, 7).toString('base64').replace(/.{76}/g, '$&\r\n');

const relay = await startRelay({ flags: { dataDir, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error', ...(database ? { database } : {}) }, env: {} });
const { db } = relay.services;

function rawMessage(i: number, from: string, subject: string, text: string): Buffer {
  const tags = [i % 3 === 0 ? 'receipt, plan=pro' : i % 3 === 1 ? 'receipt, plan=free' : 'newsletter', ...(i % 10_000 === 7 ? ['vip'] : [])].join(', ');
  const head = `From: ${from}\r\nTo: user${i % 500}@example.test\r\nSubject: ${subject}\r\nDate: Tue, 24 Nov 2026 10:00:00 +0000\r\nMessage-ID: <receipt-${i}@shop.test>\r\nX-Tags: ${tags}\r\nMIME-Version: 1.0\r\n`;
  if (i % 100 !== 0) return Buffer.from(`${head}Content-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n`);
  return Buffer.from(
    `${head}Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n` +
      `--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=receipt.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n${ATTACHMENT}\r\n--b--\r\n`,
  );
}

const started = performance.now();
const fillCpu = process.cpuUsage();
for (let done = 0; done < COUNT; done += BATCH) {
  await db.write(async (tx) => {
    const messages = [];
    const entries: Array<Omit<NewInboxEntry, 'seq'>> = [];
    for (let i = done; i < Math.min(COUNT, done + BATCH); i++) {
      const from = SENDERS[i % SENDERS.length]!;
      const address = from.replace(/.*</, '').replace('>', '');
      const subject = `Your receipt #${i}`;
      const text = `Thanks for your order ${i}. `.repeat(12);
      const raw = rawMessage(i, from, subject, text);
      const id = `msg_${String(i).padStart(26, '0')}`;
      const receivedAt = new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
      const projectId = PROJECTS[i % PROJECTS.length]!;
      messages.push({ id, envelopeFrom: address, headerFrom: from, envelopeTo: [`user${i % 500}@example.test`], subject, raw, emailId: null, projectId, receivedAt });
      const terms = searchTermsOf(raw, null);
      entries.push({
        id,
        from_name: from.replace(/ <.*/, ''),
        from_address: address,
        to: `user${i % 500}@example.test`,
        subject,
        snippet: text.slice(0, 160),
        size: raw.length,
        attachments: i % 100 === 0 ? 1 : 0,
        email_id: null,
        project_id: projectId,
        received_at: receivedAt,
        message_id_term: terms.messageId,
        tag_terms: terms.tags,
      });
    }
    await insertCapturedMessages(tx, messages);
    const ids = inValues(tx, 'id', entries.map((e) => e.id));
    const seqs = new Map((await tx.all<{ id: string; seq: number }>(`SELECT id, seq FROM captured_messages WHERE ${ids.sql}`, ids.params)).map((r) => [r.id, Number(r.seq)]));
    await insertInboxEntries(tx, entries.map((e) => ({ ...e, seq: seqs.get(e.id)! })));
    // Half of them read, as an inbox in use would be.
    await tx.run('UPDATE inbox_entries SET read_at = received_at WHERE message_seq >= ? AND message_seq % 2 = 0', [Math.min(...seqs.values())]);
  });
}
// PostgreSQL's autovacuum vacuums and analyzes a table after a large insert (statistics for the
// planner, the visibility map for index-only scans, GIN pending lists merged); the bench does it
// at once rather than wait for it. VACUUM cannot run in a transaction: a connection of its own.
if (database) {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  await client.query('VACUUM ANALYZE');
  await client.end();
}
const fillMs = performance.now() - started;
const { user, system } = process.cpuUsage(fillCpu);

/**
 * What the index of short terms costs the writer, for the search bench: the grams of the newest
 * `count` entries computed again and written again in one transaction (SQLite: their inbox_grams
 * rows deleted and inserted; PostgreSQL: short_grams updated), as none, the free-text grams only
 * (0020), or all (with each field's tagged grams, 0025). Every variant pays the same rewrite
 * (on PostgreSQL a new row version in every index): their differences are the grams' cost.
 */
async function rewriteGrams(variant: 'none' | 'text' | 'all', count: number): Promise<void> {
  await db.write(async (tx) => {
    const rows = await tx.all<{ seq: number } & Record<'from_lc' | 'to_lc' | 'subject_lc' | 'snippet_lc', string>>(
      'SELECT message_seq AS seq, from_lc, to_lc, subject_lc, snippet_lc FROM inbox_entries ORDER BY message_seq DESC LIMIT ?',
      [count],
    );
    const grams = rows.map((r) => {
      const fields = [r.from_lc, r.to_lc, r.subject_lc, r.snippet_lc];
      return { seq: Number(r.seq), grams: variant === 'all' ? shortGramsOf(fields) : variant === 'text' ? [...freeTextGramsOf(fields)] : [] };
    });
    await replaceShortGrams(tx, grams);
  });
}

process.send!({ url: relay.httpUrl, smtpPort: relay.smtpPort, adminToken: ADMIN_TOKEN, fillMs, fillCpuMs: (user + system) / 1000 });
process.on('message', async (message: { cmd: 'memory' | 'cpu' | 'stop' | 'grams'; variant?: 'none' | 'text' | 'all'; count?: number }) => {
  if (message.cmd === 'grams') {
    await rewriteGrams(message.variant!, message.count!);
    process.send!({ count: message.count });
    return;
  }
  if (message.cmd === 'memory') {
    process.send!({ rss: process.memoryUsage().rss });
    return;
  }
  if (message.cmd === 'cpu') {
    process.send!(process.cpuUsage());
    return;
  }
  const rss = process.memoryUsage().rss;
  await relay.stop();
  process.send!({ rss }, () => process.exit(0));
});
