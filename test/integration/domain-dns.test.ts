// Domain verification over real DNS: the relay's resolver (dns.servers) points at a DNS server in
// this process; POST /admin/v1/domains/{id}/verify reports each record, a second SPF record at the
// MAIL FROM host is `duplicate`, DMARC is recommended only, and the periodic recheck verifies a
// pending domain once its records appear. A name raced onto one project is connected once.
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { publishRecords, startDnsServer, type DnsAnswer, type TestDnsServer } from '../helpers/dns-server.js';
import type { RelayFlags } from '../../relay/config.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

const PUBLIC_HOSTNAME = 'mx.relay.raven.test';

interface Record {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
  required: boolean;
  status: string;
}

let dns: TestDnsServer;
before(async () => {
  dns = await startDnsServer();
});
after(async () => {
  await dns.close();
});

let counter = 0;
async function connect(t: TestRelay): Promise<{ id: string; name: string; records: Record[] }> {
  const name = `dns${++counter}-${Math.random().toString(36).slice(2, 8)}.test`;
  const res = await t.admin('POST', `/admin/v1/projects/${t.projectId}/domains`, { name });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const publish = (records: Record[], options?: { skip?: string[]; extraSpf?: boolean }) => publishRecords(dns, records, options);

/** A relay asking the test DNS server, started before the suite and stopped after it. */
function relayOnTestDns(recheckIntervalSeconds: number, flags: Partial<RelayFlags> = {}): () => TestRelay {
  let t: TestRelay;
  before(async () => {
    t = await startTestRelay({
      flags: { dnsServer: [dns.address], ...flags },
      overrides: (config) => void (config.dns.recheckIntervalSeconds = recheckIntervalSeconds),
    });
  });
  after(async () => {
    await t.stop();
  });
  return () => t;
}

const statuses = (records: Record[]) => Object.fromEntries(records.map((r) => [r.purpose, r.status]));

describe('POST /admin/v1/domains/{id}/verify against the configured resolver', () => {
  // The periodic recheck stays off here: these tests decide when a check happens.
  const relay = relayOnTestDns(0, { publicHostname: PUBLIC_HOSTNAME });

  test('the records to publish point MX and SPF at the public host name; DMARC is not required', async () => {
    const t = relay();
    const domain = await connect(t);
    const mx = domain.records.find((r) => r.purpose === 'mail_from_mx')!;
    assert.equal(mx.name, `raven.${domain.name}`);
    assert.equal(mx.value, PUBLIC_HOSTNAME);
    assert.match(domain.records.find((r) => r.purpose === 'mail_from_spf')!.value, new RegExp(`a:${PUBLIC_HOSTNAME.replace(/\./g, '\\.')}`));
    assert.deepEqual(
      domain.records.map((r) => [r.purpose, r.required]),
      [['dkim', true], ['mail_from_mx', true], ['mail_from_spf', true], ['dmarc', false]],
    );
  });

  test('every record published: each verified, the domain verified', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records);
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(statuses(res.body.records), { dkim: 'verified', mail_from_mx: 'verified', mail_from_spf: 'verified', dmarc: 'verified' });
    assert.equal(res.body.status, 'verified');
    assert.ok(res.body.verified_at);
    assert.ok(res.body.last_checked_at);
    // The resolver really asked the server (the DKIM TXT, longer than 255 bytes, came in pieces).
    assert.ok(dns.questions.includes(`TXT ${domain.records[0]!.name}`));
  });

  test('nothing published: every record failed, the domain stays pending', async () => {
    const t = relay();
    const domain = await connect(t);
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(statuses(res.body.records), { dkim: 'failed', mail_from_mx: 'failed', mail_from_spf: 'failed', dmarc: 'failed' });
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.verified_at, null);
    assert.ok(res.body.last_checked_at, 'the check is recorded');
  });

  test('DMARC absent: recommended only, the domain still verifies', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records, { skip: ['dmarc'] });
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(res.status, 200, res.text);
    const dmarc = res.body.records.find((r: Record) => r.purpose === 'dmarc');
    assert.equal(dmarc.status, 'failed');
    assert.equal(dmarc.required, false);
    assert.equal(res.body.status, 'verified');
  });

  test('two SPF records at the MAIL FROM host: duplicate, pending until one is removed', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records, { extraSpf: true });
    const first = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(statuses(first.body.records), { dkim: 'verified', mail_from_mx: 'verified', mail_from_spf: 'duplicate', dmarc: 'verified' });
    assert.equal(first.body.status, 'pending');

    publish(domain.records);
    const second = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(second.body.records.find((r: Record) => r.purpose === 'mail_from_spf').status, 'verified');
    assert.equal(second.body.status, 'verified');
  });

  test('a wrong DKIM key or an MX pointing elsewhere fails that record alone', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records);
    const dkim = domain.records.find((r) => r.purpose === 'dkim')!;
    const mx = domain.records.find((r) => r.purpose === 'mail_from_mx')!;
    dns.set(dkim.name, [{ type: 'TXT', value: 'v=DKIM1; k=rsa; p=AAAA' }]);
    dns.set(mx.name, [
      { type: 'MX', exchange: 'mx.elsewhere.example', priority: 10 },
      ...domain.records.filter((r) => r.name === mx.name && r.type === 'TXT').map((r): DnsAnswer => ({ type: 'TXT', value: r.value })),
    ]);
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.deepEqual(statuses(res.body.records), { dkim: 'failed', mail_from_mx: 'failed', mail_from_spf: 'verified', dmarc: 'verified' });
    assert.equal(res.body.status, 'pending');
  });

  test('a domain verified once stays verified when its records disappear', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records);
    assert.equal((await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`)).body.status, 'verified');
    for (const r of domain.records) dns.remove(r.name);
    const again = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(again.body.status, 'verified');
    assert.equal(statuses(again.body.records).dkim, 'failed', 'the records show the latest check');
  });

  test('a failed record says why: nothing published at its name, or the other value found there', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records, { skip: ['mail_from_mx'] });
    const dkim = domain.records.find((r) => r.purpose === 'dkim')!;
    dns.set(dkim.name, [{ type: 'TXT', value: 'v=DKIM1; k=rsa; p=WRONG' }]);
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(res.status, 200, res.text);
    const problem = (purpose: string) => res.body.records.find((r: Record & { problem?: string }) => r.purpose === purpose).problem;
    assert.equal(problem('dkim'), `${dkim.name} has "v=DKIM1; k=rsa; p=WRONG", not the expected value`);
    assert.match(problem('mail_from_mx'), new RegExp(`^no MX record at raven\\.${domain.name.replace(/\./g, '\\.')} \\(the resolver answered ENODATA\\): publish it$`));
    assert.equal(problem('mail_from_spf'), undefined, 'a verified record has no problem');

    publish(domain.records);
    const again = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(again.body.status, 'verified');
    assert.ok(again.body.records.every((r: { problem?: string }) => r.problem === undefined), 'the problems go once the records check out');
  });
});

async function waitForDomain(t: TestRelay, id: string, done: (domain: any) => boolean): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const list = await t.admin('GET', `/admin/v1/projects/${t.projectId}/domains`);
    const domain = list.body.domains.find((d: { id: string }) => d.id === id);
    if (done(domain)) return domain;
    if (Date.now() > deadline) throw new Error(`domain ${id} did not reach the expected state: ${JSON.stringify(domain)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the periodic recheck', () => {
  const relay = relayOnTestDns(0.2);

  test('a pending domain is rechecked until its records appear, then verified', async () => {
    const t = relay();
    const domain = await connect(t);
    // At least one check found nothing...
    const checked = await waitForDomain(t, domain.id, (d) => d.last_checked_at !== null);
    assert.equal(checked.status, 'pending');
    assert.equal(statuses(checked.records).dkim, 'failed');
    // ...then the records are published and a later check verifies the domain.
    publish(domain.records, { skip: ['dmarc'] });
    const verified = await waitForDomain(t, domain.id, (d) => d.status === 'verified');
    assert.deepEqual(statuses(verified.records), { dkim: 'verified', mail_from_mx: 'verified', mail_from_spf: 'verified', dmarc: 'failed' });
    assert.ok(verified.verified_at >= checked.last_checked_at);
  });

  test('a duplicate SPF record keeps the domain pending; the recheck reports it', async () => {
    const t = relay();
    const domain = await connect(t);
    publish(domain.records, { extraSpf: true });
    const seen = await waitForDomain(t, domain.id, (d) => statuses(d.records).mail_from_spf === 'duplicate');
    assert.equal(seen.status, 'pending');
    publish(domain.records);
    await waitForDomain(t, domain.id, (d) => d.status === 'verified');
  });
});

describe('the recheck follows the relay clock', () => {
  const relay = relayOnTestDns(3600, { testClock: true });

  test('advancing the test clock past the interval wakes the recheck; timestamps are relay time', async () => {
    const t = relay();
    const domain = await connect(t);
    const manual = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(manual.body.status, 'pending');
    publish(domain.records);
    const advanced = await t.admin('POST', '/admin/v1/clock/advance', { seconds: 3600 });
    assert.equal(advanced.status, 200, advanced.text);
    const verified = await waitForDomain(t, domain.id, (d) => d.status === 'verified');
    assert.ok(verified.last_checked_at >= advanced.body.now, `${verified.last_checked_at} is on the advanced clock (${advanced.body.now})`);
    assert.ok(verified.verified_at >= advanced.body.now);
  });
});

describe('POST /admin/v1/projects/{id}/domains', () => {
  const relay = relayOnTestDns(0);

  // The database decides, so concurrent requests (or relays on one database) agree.
  test('a domain connected twice at once to one project: one 201, the others a validation error', async () => {
    const name = `race${Math.random().toString(36).slice(2, 8)}.test`;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => relay().admin('POST', `/admin/v1/projects/${relay().projectId}/domains`, { name })),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422, 422], answers.map((a) => a.text).join('\n'));
    for (const refused of answers.filter((a) => a.status === 422)) {
      assert.equal(refused.body.error.code, 'validation_error');
      assert.deepEqual(refused.body.error.details, [{ field: 'name', message: 'is already connected to this project' }]);
    }
    const list = await relay().admin('GET', `/admin/v1/projects/${relay().projectId}/domains`);
    assert.equal(list.body.domains.filter((d: { name: string }) => d.name === name).length, 1);
  });
});

describe('a resolver that does not answer', () => {
  // A UDP port nobody listens on: the resolver's queries are refused, never answered.
  let t: TestRelay;
  before(async () => {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    t = await startTestRelay({ flags: { dnsServer: [`127.0.0.1:${port}`] }, overrides: (config) => void (config.dns.recheckIntervalSeconds = 0) });
  });
  after(async () => {
    await t.stop();
  });

  test('verify says the resolver gave no answer (not that the record is missing)', { timeout: 120_000 }, async () => {
    const domain = await connect(t);
    const res = await t.admin('POST', `/admin/v1/domains/${domain.id}/verify`);
    assert.equal(res.status, 200, res.text);
    for (const record of res.body.records as Array<Record & { problem: string }>) {
      assert.equal(record.status, 'failed');
      assert.match(record.problem, new RegExp(`^the resolver gave no answer for ${record.type} ${record.name.replace(/\./g, '\\.')} \\(E[A-Z]+\\): check dns\\.servers or retry$`));
    }
  });
});
