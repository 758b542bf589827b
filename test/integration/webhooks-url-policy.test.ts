// The webhook URL policy and retry schedule, without a relay: address classification, URL rules,
// creation-time resolution (with a fake resolver) and the send-time connector on a real socket.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import dns from 'node:dns';
import type { AddressInfo, LookupFunction } from 'node:net';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { nextAttemptAtMs, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_SECONDS } from '../../relay/webhooks/schedule.js';
import {
  addressRefusal,
  checkWebhookUrl,
  checkWebhookUrlSyntax,
  createGuardedLookup,
  parseIPv6,
  UrlPolicyError,
  type LookupAll,
  type ResolveAll,
} from '../../relay/webhooks/url-policy.js';
import { createGuardedConnector } from '../../relay/webhooks/guarded-http.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';
import { createEndpoint, insertEndpointRow, startReceiver, waitForAttempts, type Receiver } from '../helpers/webhooks.js';

describe('retry schedule', () => {
  test('1 min, 5 min, 15 min, 1 h, 6 h, 24 h: seven attempts in total', () => {
    assert.deepEqual([...WEBHOOK_RETRY_DELAYS_SECONDS], [60, 300, 900, 3600, 21600, 86400]);
    assert.equal(WEBHOOK_MAX_ATTEMPTS, 7);
  });

  test('each retry is measured from the previous attempt; none after the seventh', () => {
    const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
    assert.equal(nextAttemptAtMs(1, t0), t0 + 60_000);
    assert.equal(nextAttemptAtMs(6, t0), t0 + 86_400_000);
    assert.equal(nextAttemptAtMs(7, t0), null);
    assert.throws(() => nextAttemptAtMs(0, t0), RangeError);
  });
});

describe('addressRefusal', () => {
  const refusedStrict = [
    '0.0.0.0',
    '10.0.0.1',
    '100.64.0.1', // CGNAT
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '::ffff:0:127.0.0.1',
    '::127.0.0.1',
    '64:ff9b::a00:1', // NAT64 of 10.0.0.1
    '2002:7f00:1::1', // 6to4 of 127.0.0.1
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'fe80::1%eth0',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '2001::1', // Teredo
    '100::1',
  ];
  for (const address of refusedStrict) {
    test(`refuses ${address} without local webhooks`, () => {
      assert.notEqual(addressRefusal(address, false), null);
    });
  }

  for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '[2a00:1450:4001::1]', '64:ff9b::808:808']) {
    test(`allows public ${address}`, () => {
      assert.equal(addressRefusal(address, false), null);
    });
  }

  test('local webhooks allow loopback and private addresses, never metadata or multicast', () => {
    for (const ok of ['127.0.0.1', '10.0.0.1', '192.168.0.10', '::1', '::ffff:127.0.0.1', 'fd12::1', 'fe80::1', '0.0.0.0']) {
      assert.equal(addressRefusal(ok, true), null, ok);
    }
    for (const bad of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '224.0.0.1', 'ff02::1']) {
      assert.notEqual(addressRefusal(bad, true), null, bad);
    }
  });

  test('parses IPv6 with embedded IPv4 and compressed zeros', () => {
    assert.deepEqual(parseIPv6('::ffff:1.2.3.4')?.slice(10), [0xff, 0xff, 1, 2, 3, 4]);
    assert.deepEqual(parseIPv6('[::1]'), [...Array(15).fill(0), 1]);
    assert.equal(parseIPv6('example.com'), undefined);
  });
});

describe('checkWebhookUrlSyntax (no local webhooks)', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://hooks.example.com/raven', /https/],
    ['https://hooks.example.com:8443/raven', /port 443/],
    ['https://user:pass@hooks.example.com/raven', /credentials/],
    ['https://user@hooks.example.com/raven', /credentials/],
    ['https://10.0.0.1/hook', /private/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', /IPv4-mapped/],
    ['https://0x7f000001/hook', /loopback/],
    ['https://2130706433/hook', /loopback/],
    ['https://127.1/hook', /loopback/],
    ['https://0177.0.0.1/hook', /loopback/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
    ['https://[fd00:ec2::254]/', /metadata/],
    ['https://localhost/hook', /loopback/],
    ['https://api.localhost/hook', /loopback/],
    ['https://hooks.example.com/raven#frag', /fragment/],
    ['ftp://hooks.example.com/raven', /https/],
    ['not a url', /absolute URL/],
  ];
  for (const [url, why] of refused) {
    test(`refuses ${url}`, () => {
      assert.throws(() => checkWebhookUrlSyntax(url, false), (e: unknown) => e instanceof UrlPolicyError && why.test(e.message));
    });
  }

  test('accepts https on the default port, explicit :443 included', () => {
    assert.equal(checkWebhookUrlSyntax('https://hooks.example.com/raven', false).href, 'https://hooks.example.com/raven');
    assert.equal(checkWebhookUrlSyntax('https://hooks.example.com:443/raven', false).href, 'https://hooks.example.com/raven');
    assert.equal(checkWebhookUrlSyntax('https://93.184.216.34/raven', false).hostname, '93.184.216.34');
  });

  test('with local webhooks: http, any port, loopback; still no credentials or metadata', () => {
    assert.equal(checkWebhookUrlSyntax('http://127.0.0.1:3000/hook', true).port, '3000');
    assert.equal(checkWebhookUrlSyntax('http://localhost:3000/hook', true).hostname, 'localhost');
    assert.throws(() => checkWebhookUrlSyntax('http://u:p@127.0.0.1:3000/', true), UrlPolicyError);
    assert.throws(() => checkWebhookUrlSyntax('http://169.254.169.254/', true), UrlPolicyError);
    assert.throws(() => checkWebhookUrlSyntax('ftp://127.0.0.1/', true), UrlPolicyError);
  });
});

describe('checkWebhookUrl (creation time, resolving the host)', () => {
  const resolver = (answers: Record<string, string[]>) => async (host: string) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  const dns = resolver({
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'rebind.example': ['127.0.0.1'],
    'mapped.example': ['::ffff:192.168.0.1'],
  });

  test('a host resolving only to public addresses is accepted', async () => {
    assert.equal((await checkWebhookUrl('https://public.example/hook', false, dns)).href, 'https://public.example/hook');
  });

  test('one private address among the answers is enough to refuse', async () => {
    await assert.rejects(checkWebhookUrl('https://mixed.example/hook', false, dns), /10\.0\.0\.7/);
    await assert.rejects(checkWebhookUrl('https://rebind.example/hook', false, dns), /loopback/);
    await assert.rejects(checkWebhookUrl('https://mapped.example/hook', false, dns), /IPv4-mapped/);
  });

  test('a host that does not resolve is refused, unless local webhooks are allowed', async () => {
    await assert.rejects(checkWebhookUrl('https://nowhere.example/hook', false, dns), /does not resolve/);
    assert.ok(await checkWebhookUrl('http://nowhere.example:8080/hook', true, dns));
  });
});

describe('createGuardedConnector (send time, on the real connection)', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  async function post(url: string, allowLocal: boolean, lookup?: LookupFunction) {
    const agent = new Agent({ connect: createGuardedConnector(allowLocal, 2_000, lookup) });
    try {
      const res = await request(url, { method: 'POST', body: '{}', dispatcher: agent });
      await res.body.dump();
      return res.statusCode;
    } finally {
      await agent.close();
    }
  }

  test('refuses a host name that resolves to loopback (the lookup is checked, not the URL)', async () => {
    const before = receiver.requests.length;
    await assert.rejects(post(`http://localhost:${receiver.port}/hook`, false), (e: Error & { cause?: unknown }) => {
      return e instanceof UrlPolicyError || e.cause instanceof UrlPolicyError || /refused/.test(String(e.message));
    });
    assert.equal(receiver.requests.length, before, 'no request reached the loopback receiver');
  });

  test('refuses loopback literals, IPv4-mapped ones included', async () => {
    await assert.rejects(post(`http://127.0.0.1:${receiver.port}/hook`, false), /refused/);
    await assert.rejects(post(`http://[::ffff:127.0.0.1]:${receiver.port}/hook`, false), /refused/);
  });

  test('lets the same connections through when local webhooks are allowed', async () => {
    assert.equal(await post(`http://localhost:${receiver.port}/hook`, true), 200);
    assert.equal(await post(`http://127.0.0.1:${receiver.port}/hook`, true), 200);
  });

  test('DNS rebinding: a name public when created and loopback when sent is refused on the connection', async () => {
    const server = await startTestDns((name, nth) => (name === 'rebind.test' ? [nth === 1 ? '93.184.216.34' : '127.0.0.1'] : []));
    try {
      assert.equal((await checkWebhookUrl('https://rebind.test/hook', false, server.resolveAll)).hostname, 'rebind.test');
      const before = receiver.requests.length;
      await assert.rejects(
        post(`http://rebind.test:${receiver.port}/hook`, false, createGuardedLookup(false, server.lookupAll)),
        (e: Error & { cause?: unknown }) => (e.cause ?? e) instanceof UrlPolicyError && /rebind\.test resolves to a loopback/.test(String((e.cause as Error)?.message ?? e.message)),
      );
      assert.equal(receiver.requests.length, before, 'nothing reached the loopback receiver');
      // Local webhooks allowed: the same answer connects.
      assert.equal(await post(`http://rebind.test:${receiver.port}/hook`, true, createGuardedLookup(true, server.lookupAll)), 200);
      assert.equal(server.asked('rebind.test'), 3, 'every check asked the DNS server');
    } finally {
      await server.close();
    }
  });

  test('the address actually connected to is checked too, whatever the resolver said', async () => {
    // An unchecked resolver: only the connected socket's address stands between us and loopback.
    const unchecked: LookupFunction = (hostname, options, callback) => dns.lookup(hostname, options, callback);
    const before = receiver.requests.length;
    await assert.rejects(post(`http://localhost:${receiver.port}/hook`, false, unchecked), /refused: connected to a loopback address/);
    assert.equal(receiver.requests.length, before, 'the connection was closed before a request was written');
  });
});

/**
 * A DNS server on UDP port 0 answering A queries with `answer(name, nth)` (nth counts the queries
 * for that name); other types get an empty answer. resolveAll and lookupAll ask it, and nothing
 * else, so a test decides what a name resolves to at each moment.
 */
async function startTestDns(answer: (name: string, nth: number) => string[]) {
  const socket = dgram.createSocket('udp4');
  const queries = new Map<string, number>();
  socket.on('message', (msg, peer) => {
    // Header (12 bytes), then the question: length-prefixed labels, a zero, QTYPE, QCLASS.
    let at = 12;
    const labels: string[] = [];
    while (msg[at]! > 0) {
      labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString('latin1'));
      at += msg[at]! + 1;
    }
    const name = labels.join('.').toLowerCase();
    const isA = msg.readUInt16BE(at + 1) === 1;
    const nth = (queries.get(name) ?? 0) + (isA ? 1 : 0);
    queries.set(name, nth);
    const addresses = isA ? answer(name, nth) : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(0x8180, 2); // a response, recursion available, no error
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL 0: never cached
      rr.writeUInt16BE(4, 10);
      address.split('.').forEach((part, i) => rr.writeUInt8(Number(part), 12 + i));
      return rr;
    });
    socket.send(Buffer.concat([header, msg.subarray(12, at + 5), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const resolver = new dns.promises.Resolver({ timeout: 2_000, tries: 1 });
  resolver.setServers([`127.0.0.1:${(socket.address() as AddressInfo).port}`]);
  const resolveAll: ResolveAll = (hostname) => resolver.resolve4(hostname);
  const lookupAll: LookupAll = (hostname, _options, callback) => {
    resolver.resolve4(hostname).then(
      (addresses) => callback(null, addresses.map((address) => ({ address, family: 4 }))),
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
  return {
    resolveAll,
    lookupAll,
    asked: (name: string) => queries.get(name) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

// ---- hostile URL forms, through the policy and through the admin API of real relays ----

/** Loopback, private and other local targets in every spelling, and non-443 ports or plain http:
 * refused unless the relay allows local webhooks. */
const LOCAL_ONLY = [
  'http://2130706433/hook', // decimal 127.0.0.1
  'https://2130706433/hook',
  'https://0x7f000001/hook', // hex
  'https://0x7f.1/hook',
  'https://0177.0.0.1/hook', // octal
  'https://017700000001/hook',
  'https://127.1/hook', // short
  'https://0/hook', // 0.0.0.0
  'https://[::]/hook',
  'https://[::1]/hook',
  'https://[0:0:0:0:0:0:0:1]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:7f00:1]/hook',
  'https://[::127.0.0.1]/hook', // IPv4-compatible
  'https://169.254.10.20/hook', // link-local
  'https://[fe80::1]/hook',
  'https://[fc00::1]/hook', // unique-local fc00::/7
  'https://[fdab:cdef::1]/hook',
  'https://100.64.0.1/hook', // CGNAT 100.64/10
  'https://100.127.255.254/hook',
  'https://10.1.2.3/hook',
  'https://172.31.0.1/hook',
  'https://192.168.1.1/hook',
  'https://localhost./hook', // a final dot is the same host
  'https://api.localhost./hook',
  'https://①②⑦.0.0.1/hook', // full-width digits, normalised by the URL parser
  'https://hooks.raven.invalid:8443/hook', // odd ports
  'https://hooks.raven.invalid:80/hook',
  'https://hooks.raven.invalid:1/hook',
  'http://hooks.raven.invalid/hook', // not https
];

/** Refused by every relay: metadata services, schemes other than http(s), credentials, multicast. */
const NEVER = [
  'https://169.254.169.254/latest/meta-data/',
  'http://169.254.169.254/',
  'https://[::ffff:169.254.169.254]/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://[fd00:ec2::254]/',
  'https://100.100.100.200/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'http://metadata.google.internal./',
  'https://METADATA.GOOGLE.INTERNAL/',
  'https://metadata/',
  'https://instance-data.ec2.internal/latest/',
  'ftp://hooks.raven.invalid/hook',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'gopher://127.0.0.1:70/_hello',
  'data:text/plain,hello',
  'ws://127.0.0.1:8080/hook',
  'https://user:pass@hooks.raven.invalid/hook',
  'https://user@127.0.0.1/hook',
  'https://:pass@hooks.raven.invalid/hook',
  'https://224.0.0.1/hook',
  'https://[ff02::1]/hook',
  'http://127.0.0.1:0/hook',
];

describe('hostile URL forms against the policy', () => {
  for (const url of LOCAL_ONLY) {
    test(`${url}: refused without local webhooks, allowed with them`, () => {
      assert.throws(() => checkWebhookUrlSyntax(url, false), UrlPolicyError);
      assert.doesNotThrow(() => checkWebhookUrlSyntax(url, true));
    });
  }
  for (const url of NEVER) {
    test(`${url}: refused in both modes`, () => {
      assert.throws(() => checkWebhookUrlSyntax(url, false), UrlPolicyError);
      assert.throws(() => checkWebhookUrlSyntax(url, true), UrlPolicyError);
    });
  }
});

async function createWebhook(t: TestRelay, url: string) {
  return t.admin('POST', `/admin/v1/projects/${t.projectId}/webhooks`, { url, events: ['*'] });
}

function assertUrlRefused(res: { status: number; text: string; body: any }, url: string): void {
  assert.equal(res.status, 422, `${url} -> ${res.text}`);
  assert.equal(res.body.error.code, 'validation_error');
  assert.deepEqual(res.body.error.details.map((d: { field: string }) => d.field), ['url'], url);
}

describe('hostile URL forms through the admin API', () => {
  let strict: TestRelay;
  let local: TestRelay;
  before(async () => {
    strict = await startTestRelay({
      overrides: (c) => {
        c.allowLocalWebhooks = false;
      },
    });
    local = await startTestRelay(); // development mode: local webhooks allowed
  });
  after(async () => {
    await strict.stop();
    await local.stop();
  });

  test('without local webhooks: every local, metadata, scheme, port and credential form is a 422 on url, and nothing is stored', async () => {
    for (const url of [...LOCAL_ONLY, ...NEVER]) assertUrlRefused(await createWebhook(strict, url), url);
    const list = await strict.admin('GET', `/admin/v1/projects/${strict.projectId}/webhooks`);
    assert.deepEqual(list.body.webhooks, []);
    // Public literals still pass: the refusals are about the address, not the form.
    for (const url of ['https://93.184.216.34/hook', 'https://[2606:4700:4700::1111]/hook']) {
      assert.equal((await createWebhook(strict, url)).status, 201, url);
    }
  });

  test('with local webhooks: the local forms are accepted; metadata, schemes, credentials and multicast still are not', async () => {
    for (const url of LOCAL_ONLY) {
      const res = await createWebhook(local, url);
      assert.equal(res.status, 201, `${url} -> ${res.text}`);
      assert.equal((await local.admin('DELETE', `/admin/v1/webhooks/${res.body.id}`)).status, 204);
    }
    for (const url of NEVER) assertUrlRefused(await createWebhook(local, url), url);
  });
});

/** A name the system resolver maps to loopback or private addresses only (the machine's own host
 * name usually is), and that the URL rules alone do not refuse. */
async function nameResolvingLocally(): Promise<string | undefined> {
  for (const name of [os.hostname(), 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']) {
    try {
      checkWebhookUrlSyntax(`https://${name}/`, false);
      const addresses = await dns.promises.lookup(name, { all: true });
      if (addresses.length > 0 && addresses.every((a) => addressRefusal(a.address, false) !== null)) return name;
    } catch {
      // not resolvable here, or refused by name: try the next
    }
  }
  return undefined;
}

describe('a host name that resolves to a local address, through the system resolver', async () => {
  const name = await nameResolvingLocally();
  const skip = name ? false : 'no host name here resolves to loopback or private addresses only';
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('refused at creation and, for an endpoint stored before, at send time; never contacted', { skip }, async () => {
    const t = await startTestRelay({
      overrides: (c) => {
        c.allowLocalWebhooks = false;
      },
    });
    try {
      const created = await createWebhook(t, `https://${name}/hook`);
      assertUrlRefused(created, name!);
      assert.match(created.body.error.details[0].message, /resolves to/);
      // As if it had resolved publicly when created (DNS rebinding): the send checks again.
      await insertEndpointRow(t, 'whk_resolves_locally', `https://${name}/hook`);
      assert.equal((await t.send()).status, 202);
      const [attempt] = await waitForAttempts(t, 'whk_resolves_locally', 1);
      assert.equal(attempt!.status_code, null);
      assert.match(attempt!.error!, new RegExp(`URL policy: refused: ${name!.replace(/\./g, '\\.')} resolves to`));
      assert.equal(receiver.requests.length, 0);
    } finally {
      await t.stop();
    }
  });

  test('delivered when local webhooks are allowed', { skip }, async () => {
    const t = await startTestRelay();
    try {
      const hook = await createEndpoint(t, `http://${name}:${receiver.port}/hook`, ['email.queued']);
      assert.equal((await t.send()).status, 202);
      const [attempt] = await waitForAttempts(t, hook.id, 1);
      assert.equal(attempt!.status_code, 200, JSON.stringify(attempt));
      assert.equal(receiver.requests.length, 1);
    } finally {
      await t.stop();
    }
  });
});
