// A load target run in its own process so autocannon (in the parent) does not share its event loop.
// Usage: node --import tsx bench/target.ts <node|sqlite|relay> <dataDir>
// Prints one JSON line {url, apiKey, domain}; on the IPC message 'stop' replies {peakRss} and exits.
import http from 'node:http';
import path from 'node:path';
import sqlite3 from 'sqlite3';

const kind = process.argv[2];
const dataDir = process.argv[3];
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as any).port}`)));
}

let counter = 0;
const newId = () => `em_${Date.now().toString(36)}${(counter++).toString(36).padStart(8, '0')}`;

async function startNode() {
  const server = http.createServer(async (req, res) => {
    try {
      await readJson(req);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: newId(), status: 'queued', test_mode: true }));
    } catch {
      res.writeHead(400).end();
    }
  });
  return { url: await listen(server), stop: async () => server.close() };
}

async function startSqlite() {
  const db = new sqlite3.Database(path.join(dataDir, 'ceiling.sqlite'));
  const exec = (sql: string) => new Promise<void>((ok, ko) => db.exec(sql, (e) => (e ? ko(e) : ok())));
  await exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
    CREATE TABLE emails (id TEXT PRIMARY KEY, sender TEXT, subject TEXT, body TEXT, created_at TEXT);
    CREATE TABLE recipients (email_id TEXT, address TEXT, status TEXT, PRIMARY KEY (email_id, address));`);
  const insEmail = db.prepare('INSERT INTO emails VALUES (?, ?, ?, ?, ?)');
  const insRcpt = db.prepare('INSERT INTO recipients VALUES (?, ?, ?)');
  type Pending = { id: string; msg: any; done: (e?: Error | null) => void };
  let pending: Pending[] = [];
  let committing = false;
  const flush = () => {
    if (committing || pending.length === 0) return;
    committing = true;
    const batch = pending;
    pending = [];
    db.serialize(() => {
      db.run('BEGIN');
      for (const p of batch) {
        insEmail.run(p.id, p.msg.from, p.msg.subject, JSON.stringify(p.msg), new Date().toISOString());
        for (const to of p.msg.to) insRcpt.run(p.id, to, 'queued');
      }
      db.run('COMMIT', (e: Error | null) => {
        committing = false;
        for (const p of batch) p.done(e);
        flush();
      });
    });
  };
  const server = http.createServer(async (req, res) => {
    try {
      const msg = await readJson(req);
      const id = newId();
      await new Promise<void>((ok, ko) => {
        pending.push({ id, msg, done: (e) => (e ? ko(e) : ok()) });
        flush();
      });
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, status: 'queued', test_mode: true }));
    } catch {
      res.writeHead(500).end();
    }
  });
  return {
    url: await listen(server),
    stop: async () => {
      server.close();
      await new Promise((r) => db.close(r));
    },
  };
}

async function startRelayTarget() {
  const { startRelay } = await import('../relay/app.js');
  const relay = await startRelay({
    flags: { dataDir, port: 0, smtpPort: 0, adminToken: 'bench-admin-token-0123456789', logLevel: 'error' },
    env: {},
    overrides: (config) => {
      for (const k of ['testKeyPerMinute', 'keyPerSecond', 'workspacePerSecond', 'testKeyMonthlyRecipients', 'workspaceMonthlyRecipients'] as const) {
        (config.limits as any)[k] = 1e9;
      }
    },
  });
  return { url: relay.httpUrl, apiKey: relay.bootstrap!.apiKey, domain: relay.bootstrap!.domain, stop: () => relay.stop() };
}

const target = kind === 'node' ? await startNode() : kind === 'sqlite' ? await startSqlite() : await startRelayTarget();
process.send!({ ready: true, url: target.url, apiKey: (target as any).apiKey ?? 'x', domain: (target as any).domain ?? 'example.test' });
process.on('disconnect', () => process.exit(1));
process.on('message', async (m: any) => {
  if (m === 'peak') {
    process.send!({ peakRss });
  } else if (m === 'stop') {
    clearInterval(sampler);
    const rss = peakRss;
    await Promise.race([target.stop(), new Promise((r) => setTimeout(r, 5000))]);
    process.send!({ peakRss: rss }, () => process.exit(0));
  }
});
