import pg from 'pg';
import { startPostgresServer, createTestDatabase } from '/work/wt/i23-long/test/helpers/postgres-server.js';
const N = Number(process.argv[2] ?? 100000);
const server = await startPostgresServer({ durable: true });
const db = await createTestDatabase(server.url);
const c = new pg.Client({ connectionString: db.url }); await c.connect();
console.log((await c.query('show shared_buffers')).rows, (await c.query('show max_parallel_workers_per_gather')).rows);
await c.query(`CREATE TABLE e(seq bigint primary key, from_name text, from_address text, to_text text, subject text, snippet text, from_lc text, to_lc text, subject_lc text, snippet_lc text, short_grams tsvector, received_at text)`);
await c.query(`CREATE TABLE t(seq bigint primary key, text text)`);
const senders = ['alice alice@shop.test','billing billing@acme.test','newsletter news@weekly.test','support help@desk.test'];
function grams(s: string) { const g = new Set<string>(); for (let i=0;i<s.length;i++){g.add(s[i]); if(i+1<s.length) g.add(s.slice(i,i+2));} return [...g]; }
for (let b = 0; b < N; b += 1000) {
  const rows = []; const vals: unknown[] = [];
  for (let i = b; i < Math.min(N, b+1000); i++) {
    const t = `thanks for your order ${i}. `.repeat(12).slice(0,160);
    const f = [senders[i%4], `user${i%500}@example.test`, `your receipt #${i}`, t];
    vals.push(i+1, f[0], f[0], f[1], f[2], f[3], ...f, grams(f.join('\n')), new Date().toISOString());
    rows.push(`($${vals.length-11}, $${vals.length-10}, $${vals.length-9}, $${vals.length-8}, $${vals.length-7}, $${vals.length-6}, $${vals.length-5}, $${vals.length-4}, $${vals.length-3}, $${vals.length-2}, array_to_tsvector($${vals.length-1}::text[]), $${vals.length})`);
  }
  await c.query(`INSERT INTO e VALUES ${rows.join(',')}`, vals);
}
await c.query(`INSERT INTO t SELECT seq, from_lc || chr(1) || to_lc || chr(1) || subject_lc || chr(1) || snippet_lc FROM e`);
await c.query('VACUUM ANALYZE e'); await c.query('VACUUM ANALYZE t');
console.log((await c.query(`select pg_relation_size('e')/8192 e_pages, pg_relation_size('t')/8192 t_pages`)).rows);
async function time(label: string, sql: string, params: unknown[] = []) {
  for (let k = 0; k < 4; k++) {
    const w = performance.now();
    const r = await c.query(sql, params);
    if (k===3) console.log(label, r.rows.length, (performance.now()-w).toFixed(1), 'ms');
  }
  const ex = await c.query('EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) ' + sql, params); console.log(ex.rows.map((r: any) => r['QUERY PLAN']).slice(0,12).join('\n'));
}
const L = '%order%';
await c.query(`ALTER TABLE t ADD FOREIGN KEY (seq) REFERENCES e(seq) ON DELETE CASCADE`);
for (const w of [0, 2]) {
  await c.query(`SET max_parallel_workers_per_gather = ${w}`);
  await time(`join order w${w}`, `SELECT e.seq, e.subject, e.snippet FROM t JOIN e ON e.seq = t.seq WHERE t.text NOT LIKE $1 ORDER BY t.seq DESC LIMIT 51`, [L]);
  await time(`join +0 w${w}`, `SELECT e.seq, e.subject, e.snippet FROM t JOIN e ON e.seq = t.seq WHERE t.text NOT LIKE $1 ORDER BY t.seq + 0 DESC LIMIT 51`, [L]);
  await time(`join in w${w}`, `SELECT e.seq, e.subject, e.snippet FROM e WHERE e.seq IN (SELECT seq FROM t WHERE t.text NOT LIKE $1) ORDER BY e.seq DESC LIMIT 51`, [L]);
  await time(`join order zzz w${w}`, `SELECT e.seq, e.subject, e.snippet FROM t JOIN e ON e.seq = t.seq WHERE t.text NOT LIKE $1 ORDER BY t.seq DESC LIMIT 51`, ['%zzz%']);
  await time(`join order 99999 w${w}`, `SELECT e.seq, e.subject, e.snippet FROM t JOIN e ON e.seq = t.seq WHERE t.text NOT LIKE $1 ORDER BY t.seq DESC LIMIT 51`, ['%.%']);
}
await c.end(); await db.drop(); await server.stop();
