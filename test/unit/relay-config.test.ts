// relay/config.ts for the production settings (dns, smtpTls, publicHostname, upstream from the
// environment), and the committed production examples: examples/raven.json with examples/raven.env
// must load, and examples/raven-relay.service must agree with them, so the README never rots.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, DEFAULT_POOL_SIZE, deliveryConcurrency, resolveConfig } from '../../relay/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const example = (name: string) => path.join(root, 'examples', name);

// One folder for every config file of this run, removed at the end (each test wrote its own before).
const dir = mkdtempSync(path.join(tmpdir(), 'raven-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function configFile(content: unknown): string {
  const file = path.join(dir, `raven-${++files}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

/** KEY=VALUE lines, as systemd's EnvironmentFile= reads them (comments and blanks skipped). */
function parseEnvFile(file: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const eq = line.indexOf('=');
    assert.ok(eq > 0, `an assignment: ${line}`);
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

/** `Key=value` lines of a unit file, by key (repeated keys keep every value). */
function parseUnit(file: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) keys.set(m[1]!, [...(keys.get(m[1]!) ?? []), m[2]!]);
  }
  return keys;
}

const rejects = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: Error) => e instanceof ConfigError && pattern.test(e.message));

test('dns: defaults, file, RAVEN_DNS_SERVERS (comma-separated), then --dns-server', () => {
  assert.deepEqual(resolveConfig({}, {}).dns, { servers: [], recheckIntervalSeconds: 300 });
  const file = configFile({ dns: { servers: ['10.0.0.53'], recheckIntervalSeconds: 60 } });
  assert.deepEqual(resolveConfig({ config: file }, {}).dns, { servers: ['10.0.0.53'], recheckIntervalSeconds: 60 });
  const env = { RAVEN_DNS_SERVERS: '127.0.0.1:5353, [::1]:5353', RAVEN_DNS_RECHECK_INTERVAL_SECONDS: '30' };
  assert.deepEqual(resolveConfig({ config: file }, env).dns, { servers: ['127.0.0.1:5353', '[::1]:5353'], recheckIntervalSeconds: 30 });
  assert.deepEqual(resolveConfig({ config: file, dnsServer: ['192.0.2.1'] }, env).dns.servers, ['192.0.2.1']);
});

test('dns: bad values and unknown keys stop start-up', () => {
  rejects(() => resolveConfig({ dnsServer: ['resolver.example'] }, {}), /dns\.servers/);
  rejects(() => resolveConfig({}, { RAVEN_DNS_RECHECK_INTERVAL_SECONDS: '-1' }), /recheckIntervalSeconds/);
  rejects(() => resolveConfig({}, { RAVEN_DNS_RECHECK_INTERVAL_SECONDS: 'soon' }), /recheckIntervalSeconds/);
  rejects(() => resolveConfig({ config: configFile({ dns: { server: ['1.1.1.1'] } }) }, {}), /unknown config key "dns\.server"/);
  rejects(() => resolveConfig({ config: configFile({ dns: { servers: '1.1.1.1' } }) }, {}), /"dns\.servers" must be an array of strings/);
});

test('smtpTls and publicHostname: file, environment, flags', () => {
  const file = configFile({ smtpTls: { certFile: '/file/cert.pem', keyFile: '/file/key.pem' }, publicHostname: 'mx.file.example' });
  const fromFile = resolveConfig({ config: file }, {});
  assert.deepEqual(fromFile.smtpTls, { certFile: '/file/cert.pem', keyFile: '/file/key.pem', implicit: false });
  assert.equal(fromFile.publicHostname, 'mx.file.example');
  const env = { RAVEN_SMTP_TLS_CERT_FILE: '/env/cert.pem', RAVEN_SMTP_TLS_KEY_FILE: '/env/key.pem', RAVEN_PUBLIC_HOSTNAME: 'mx.env.example' };
  const fromEnv = resolveConfig({ config: file }, env);
  assert.deepEqual(fromEnv.smtpTls, { certFile: '/env/cert.pem', keyFile: '/env/key.pem', implicit: false });
  assert.equal(fromEnv.publicHostname, 'mx.env.example');
  const fromFlags = resolveConfig({ config: file, smtpTlsCert: '/flag/cert.pem', publicHostname: 'mx.flag.example' }, env);
  assert.equal(fromFlags.smtpTls.certFile, '/flag/cert.pem');
  assert.equal(fromFlags.smtpTls.keyFile, '/env/key.pem');
  assert.equal(fromFlags.publicHostname, 'mx.flag.example');
  rejects(() => resolveConfig({ publicHostname: 'not a host' }, {}), /publicHostname/);
  rejects(() => resolveConfig({ config: configFile({ smtpTls: { cert: '/x' } }) }, {}), /unknown config key "smtpTls\.cert"/);
});

test('submissionPort: 7587 beside the default ports, a free one when the HTTP or SMTP port is set and it is not (CONTRACT section 9)', () => {
  assert.equal(resolveConfig({}, {}).submissionPort, 7587);
  assert.equal(resolveConfig({ port: 7800 }, {}).submissionPort, 0);
  assert.equal(resolveConfig({}, { RAVEN_SMTP_PORT: '7825' }).submissionPort, 0);
  assert.equal(resolveConfig({ config: configFile({ port: 7800 }) }, {}).submissionPort, 0);
  assert.equal(resolveConfig({ port: 7800, submissionPort: 7887 }, {}).submissionPort, 7887);
  assert.equal(resolveConfig({ port: 7800 }, { RAVEN_SUBMISSION_PORT: '7888' }).submissionPort, 7888);
  assert.equal(resolveConfig({ config: configFile({ submissionPort: 587 }) }, {}).submissionPort, 587);
  rejects(() => resolveConfig({ submissionPort: '70000' }, {}), /submission port must be a port number/);
});

test('an upstream URL from the environment keeps requireTLS and pool from the file', () => {
  const file = configFile({ delivery: { provider: 'smtp', smtp: { requireTLS: true, pool: 2 } } });
  const config = resolveConfig({ config: file }, { RAVEN_UPSTREAM: 'smtp://user:p%40ss@smtp.provider.example:2587' });
  assert.deepEqual(config.delivery.smtp, {
    host: 'smtp.provider.example', port: 2587, secure: false, requireTLS: true, pool: 2, auth: { user: 'user', pass: 'p@ss' },
  });
  assert.equal(resolveConfig({ upstream: 'smtps://h.example' }, {}).delivery.smtp?.requireTLS, false, 'no file: the URL defaults');
});

test('delivery.smtp.pool takes true (the default pool), false (one connection) or a number, as nodemailer does', () => {
  const pool = (value: unknown) =>
    resolveConfig({ config: configFile({ delivery: { provider: 'smtp', smtp: { host: 'smtp.example', port: 587, ...(value === undefined ? {} : { pool: value }) } } }) }, {})
      .delivery.smtp?.pool;
  assert.equal(pool(true), DEFAULT_POOL_SIZE);
  assert.equal(pool(undefined), DEFAULT_POOL_SIZE);
  assert.equal(pool(false), 1);
  assert.equal(pool(3), 3);
  for (const bad of [0, 2.5, -1, 'yes', null]) assert.throws(() => pool(bad), ConfigError, `pool ${JSON.stringify(bad)} is refused`);
  assert.throws(() => pool('yes'), /"delivery\.smtp\.pool" must be true, false or a number/);
  assert.throws(() => pool(0), /delivery\.smtp\.pool must be true, false or a whole number of connections/);
});

test('delivery concurrency: 64 into the sink and 8 to an upstream by default; into the sink never above the sink client limit', () => {
  const concurrency = (file: unknown) => deliveryConcurrency(resolveConfig({ config: configFile(file) }, {}));
  assert.equal(concurrency({}), 64);
  assert.equal(concurrency({ delivery: { provider: 'smtp', smtp: { host: 'smtp.example', port: 587 } } }), 8);
  assert.equal(concurrency({ delivery: { concurrency: 16 } }), 16);
  // Past limits.smtpMaxClients the sink refused the sessions over it with 421 (the e2e bench at 128).
  assert.equal(concurrency({ delivery: { concurrency: 128 } }), 100);
  assert.equal(concurrency({ delivery: { concurrency: 12 }, limits: { smtpMaxClients: 3 } }), 3);
  assert.equal(concurrency({ limits: { smtpMaxClients: 10 } }), 10);
  // An upstream's own limits are its business: the sink's listener does not bound it.
  assert.equal(concurrency({ delivery: { provider: 'smtp', smtp: { host: 'smtp.example', port: 587 }, concurrency: 40 }, limits: { smtpMaxClients: 3 } }), 40);
});

test('examples/raven.json with examples/raven.env loads as a production relay', () => {
  const env = parseEnvFile(example('raven.env'));
  const config = resolveConfig({ config: example('raven.json') }, env);
  assert.equal(config.delivery.provider, 'smtp');
  assert.equal(config.delivery.smtp?.host, 'smtp.provider.example');
  assert.equal(config.delivery.smtp?.requireTLS, true);
  assert.ok(config.delivery.smtp?.auth?.pass, 'the upstream login comes from the environment');
  assert.equal(config.adminToken, env.RAVEN_ADMIN_TOKEN);
  assert.equal(config.secretKey, env.RAVEN_SECRET_KEY);
  assert.ok(config.smtpTls.certFile && config.smtpTls.keyFile);
  assert.ok(config.publicHostname);
  assert.ok(config.dns.servers.length > 0);
  assert.equal(config.allowLocalWebhooks, false, 'an upstream relay refuses local webhook URLs');
  const file = readFileSync(example('raven.json'), 'utf8');
  assert.doesNotMatch(file, /adminToken|secretKey|"auth"|pass/, 'no secrets in raven.json');
});

test('examples/raven-relay.service agrees with the examples and stops the relay gracefully', () => {
  const unit = parseUnit(example('raven-relay.service'));
  const one = (key: string) => {
    const values = unit.get(key);
    assert.equal(values?.length, 1, `${key}= once`);
    return values[0]!;
  };
  const config = resolveConfig({ config: example('raven.json') }, parseEnvFile(example('raven.env')));
  assert.match(one('ExecStart'), /^\/\S+ relay start --config \/etc\/raven\/raven\.json$/);
  assert.equal(one('EnvironmentFile'), '/etc/raven/raven.env');
  assert.ok(one('User'));
  assert.equal(one('Restart'), 'on-failure');
  assert.equal(one('KillSignal'), 'SIGTERM');
  // Longer than the relay's own forced exit (10 s in cli/commands/relay/start.ts).
  assert.ok(Number(one('TimeoutStopSec')) > 10);
  assert.equal(one('NoNewPrivileges'), 'true');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.ok(one('ReadWritePaths').split(/\s+/).includes(config.dataDir), 'the data directory is writable');
  assert.equal(`/var/lib/${one('StateDirectory')}`, config.dataDir);
  assert.ok(config.smtpPort >= 1024 || one('AmbientCapabilities').includes('CAP_NET_BIND_SERVICE'), 'may bind the SMTP port');
});

test('the README shows examples/raven.json as committed', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Production (self-hosted)'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  assert.ok(block, 'a json block in the Production section');
  assert.deepEqual(JSON.parse(block[1]!), JSON.parse(readFileSync(example('raven.json'), 'utf8')));
});

test('the upstream CA: delivery.smtp.ca in the file, RAVEN_UPSTREAM_CA_FILE over it, --upstream-ca over both; kept by an upstream URL', () => {
  const file = configFile({ delivery: { provider: 'smtp', smtp: { host: 'smtp.example', port: 587, ca: '/etc/raven/file-ca.pem' } } });
  assert.equal(resolveConfig({ config: file }, {}).delivery.smtp?.ca, '/etc/raven/file-ca.pem');
  assert.equal(resolveConfig({ config: file }, { RAVEN_UPSTREAM: 'smtp://u:p@other.example:587' }).delivery.smtp?.ca, '/etc/raven/file-ca.pem');
  assert.equal(resolveConfig({ config: file }, { RAVEN_UPSTREAM_CA_FILE: '/env-ca.pem' }).delivery.smtp?.ca, '/env-ca.pem');
  assert.equal(resolveConfig({ config: file, upstreamCa: '/flag-ca.pem' }, { RAVEN_UPSTREAM_CA_FILE: '/env-ca.pem' }).delivery.smtp?.ca, '/flag-ca.pem');
  assert.throws(() => resolveConfig({ upstreamCa: '/flag-ca.pem' }, {}), (e: Error) => e instanceof ConfigError && /--upstream-ca .*needs an upstream/.test(e.message));
});
