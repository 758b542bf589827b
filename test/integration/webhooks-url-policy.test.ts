// The webhook URL policy and retry schedule, without a relay: address classification, URL rules,
// creation-time resolution (with a fake resolver) and the send-time connector on a real socket.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { nextAttemptAtMs, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_SECONDS } from '../../relay/webhooks/schedule.js';
import {
  addressRefusal,
  checkWebhookUrl,
  checkWebhookUrlSyntax,
  createGuardedConnector,
  parseIPv6,
  UrlPolicyError,
} from '../../relay/webhooks/url-policy.js';
import { startReceiver, type Receiver } from './webhooks-helpers.js';

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

  async function post(url: string, allowLocal: boolean) {
    const agent = new Agent({ connect: createGuardedConnector(allowLocal, 2_000) });
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
});
