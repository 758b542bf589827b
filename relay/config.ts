// Relay configuration: typed defaults, then the JSON file (--config), then RAVEN_* variables, then
// flags. Unknown keys and bad values stop start-up with a message that names them.
import { Resolver } from 'node:dns';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_IDEMPOTENCY_RETENTION_DAYS } from './domain/idempotency.js';
import { SPEC_MAX_RECIPIENTS } from './domain/send-request.js';

export interface SmtpUpstreamConfig {
  host: string;
  port: number;
  /** Implicit TLS (smtps). */
  secure: boolean;
  /** Refuse to send when STARTTLS is not offered. */
  requireTLS: boolean;
  auth?: { user: string; pass: string };
  /** Pooled connections to the upstream, at least 1 (the file may say true, false or a number: see poolSize). */
  pool: number;
}

/** Connections kept open to the upstream when the configuration does not say (or says `true`). */
export const DEFAULT_POOL_SIZE = 5;

export interface LimitsConfig {
  /** Specification section 8: the complete JSON request. */
  maxRequestBytes: number;
  maxRecipients: number;
  /** Accepted requests per second per key / per workspace; per minute per rr_test_ key. */
  keyPerSecond: number;
  workspacePerSecond: number;
  testKeyPerMinute: number;
  /** Accepted recipients per UTC month. */
  testKeyMonthlyRecipients: number;
  workspaceMonthlyRecipients: number;
  /** Bodies of terminal emails are erased this long after they end. */
  bodyRetentionDays: number;
  /** Idempotency records are kept this long (the contract asks for at least 24 hours). */
  idempotencyRetentionDays: number;
  /** An HTTP client that has not sent its whole request head by then is answered 408 and
   * disconnected (slow-loris). */
  httpHeadersTimeoutMs: number;
  /** The SMTP sink: larger messages are refused 552, connections past the count 421, and a
   * session idle this long (real time) is closed. */
  smtpMaxMessageBytes: number;
  smtpMaxClients: number;
  smtpSocketTimeoutMs: number;
  /** A session is closed this long after it opened, however busy: a client trickling just under
   * the idle time-out cannot hold a connection slot for ever. */
  smtpMaxSessionMs: number;
}

export interface DeliveryConfig {
  provider: 'sink' | 'smtp';
  smtp?: SmtpUpstreamConfig;
  /** The provider's account-level limits: recipient-weighted rate and daily allowance (0 = none). */
  recipientsPerSecond: number;
  dailyRecipients: number;
  /** Concurrent dispatches; unset: sized to the provider (deliveryConcurrency). */
  concurrency?: number;
  /**
   * On PostgreSQL: how long a relay's claim on a job lasts without renewal (real time). A relay
   * renews its claims while it dispatches; when one dies, its jobs are settled by the others this
   * long after its last renewal.
   */
  leaseSeconds: number;
}

// The sink is our own listener on loopback: many sessions cost little and hide the commit latency
// of each capture (under limits.smtpMaxClients). An upstream gets what a mail provider usually allows.
const SINK_CONCURRENCY = 64;
const UPSTREAM_CONCURRENCY = 8;

/** Concurrent dispatches: the configured number, else the provider's default. */
export function deliveryConcurrency(delivery: DeliveryConfig): number {
  return Math.max(1, delivery.concurrency ?? (delivery.provider === 'sink' ? SINK_CONCURRENCY : UPSTREAM_CONCURRENCY));
}

export interface DnsConfig {
  /** Resolvers for domain verification, `ip` or `ip:port` (`[ipv6]:port`); empty = the system's. */
  servers: string[];
  /** Pending domains are rechecked this often (relay clock); 0 turns the recheck off. */
  recheckIntervalSeconds: number;
}

export interface SmtpTlsConfig {
  /** PEM certificate chain and private key of the SMTP listener; both or neither. */
  certFile?: string;
  keyFile?: string;
  /** Implicit TLS from the first byte (port 465 style) instead of offering STARTTLS. */
  implicit: boolean;
}

export interface RelayConfig {
  dataDir: string;
  /** A postgres:// URL: everything is stored in PostgreSQL instead of SQLite in dataDir. */
  database?: string;
  host: string;
  port: number;
  smtpHost: string;
  smtpPort: number;
  /** TLS for the SMTP listener: STARTTLS offered (or implicit TLS) when a certificate is set. */
  smtpTls: SmtpTlsConfig;
  /** The relay's public DNS name: the MX and SPF target of domain records, the SMTP greeting. */
  publicHostname?: string;
  adminToken?: string;
  testClock: boolean;
  allowLocalWebhooks: boolean;
  /** The verified domain of the bootstrap project. */
  domain: string;
  /** Key for secrets at rest; generated into the data directory when absent. */
  secretKey?: string;
  logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  limits: LimitsConfig;
  delivery: DeliveryConfig;
  dns: DnsConfig;
}

export interface RelayFlags {
  dataDir: string;
  database: string;
  host: string;
  port: number | string;
  smtpPort: number | string;
  smtpTlsCert: string;
  smtpTlsKey: string;
  publicHostname: string;
  dnsServer: string[];
  adminToken: string;
  testClock: boolean;
  allowLocalWebhooks: boolean;
  domain: string;
  upstream: string;
  config: string;
  logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function defaultConfig(): RelayConfig {
  return {
    dataDir: '.raven',
    host: '127.0.0.1',
    port: 7700,
    smtpHost: '127.0.0.1',
    smtpPort: 7725,
    smtpTls: { implicit: false },
    testClock: false,
    // Development mode (the sink) allows local webhooks; an upstream provider turns this off
    // unless asked for (resolved in resolveConfig).
    allowLocalWebhooks: false,
    domain: 'example.test',
    logLevel: 'info',
    limits: {
      maxRequestBytes: 10 * 1024 * 1024,
      maxRecipients: SPEC_MAX_RECIPIENTS,
      keyPerSecond: 100,
      workspacePerSecond: 200,
      testKeyPerMinute: 15,
      testKeyMonthlyRecipients: 1000,
      workspaceMonthlyRecipients: 5000,
      bodyRetentionDays: 7,
      idempotencyRetentionDays: DEFAULT_IDEMPOTENCY_RETENTION_DAYS,
      httpHeadersTimeoutMs: 15_000,
      // A 10 MiB JSON request can grow by base64/quoted-printable encoding; 25 MiB leaves room for it.
      smtpMaxMessageBytes: 25 * 1024 * 1024,
      smtpMaxClients: 100,
      smtpSocketTimeoutMs: 60_000,
      // Ten minutes moves a 25 MiB message at about 45 KB/s; slower than that is not a mail client.
      smtpMaxSessionMs: 600_000,
    },
    delivery: {
      provider: 'sink',
      recipientsPerSecond: 0,
      dailyRecipients: 0,
      // Long enough that a busy relay renews in time (every third of it), short enough that the
      // recipients of a dead relay learn their fate within a minute.
      leaseSeconds: 30,
    },
    dns: {
      servers: [],
      // Five minutes: DNS changes usually show within minutes, and a pending domain costs a few
      // queries per check.
      recheckIntervalSeconds: 300,
    },
  };
}

type Shape = { [key: string]: 'string' | 'number' | 'boolean' | 'number|boolean' | 'string[]' | Shape | 'object' };

const FILE_SHAPE: Shape = {
  dataDir: 'string',
  database: 'string',
  host: 'string',
  port: 'number',
  smtpHost: 'string',
  smtpPort: 'number',
  smtpTls: { certFile: 'string', keyFile: 'string', implicit: 'boolean' },
  publicHostname: 'string',
  adminToken: 'string',
  testClock: 'boolean',
  allowLocalWebhooks: 'boolean',
  domain: 'string',
  secretKey: 'string',
  logLevel: 'string',
  limits: {
    maxRequestBytes: 'number',
    maxRecipients: 'number',
    keyPerSecond: 'number',
    workspacePerSecond: 'number',
    testKeyPerMinute: 'number',
    testKeyMonthlyRecipients: 'number',
    workspaceMonthlyRecipients: 'number',
    bodyRetentionDays: 'number',
    idempotencyRetentionDays: 'number',
    httpHeadersTimeoutMs: 'number',
    smtpMaxMessageBytes: 'number',
    smtpMaxClients: 'number',
    smtpSocketTimeoutMs: 'number',
    smtpMaxSessionMs: 'number',
  },
  delivery: {
    provider: 'string',
    smtp: { host: 'string', port: 'number', secure: 'boolean', requireTLS: 'boolean', auth: 'object', pool: 'number|boolean' },
    recipientsPerSecond: 'number',
    dailyRecipients: 'number',
    concurrency: 'number',
    leaseSeconds: 'number',
  },
  dns: { servers: 'string[]', recheckIntervalSeconds: 'number' },
};

function checkShape(value: unknown, shape: Shape, where: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${where || 'config'} must be a JSON object`);
  }
  for (const [key, v] of Object.entries(value)) {
    const expected = shape[key];
    const name = where ? `${where}.${key}` : key;
    if (expected === undefined) throw new ConfigError(`unknown config key "${name}"`);
    if (typeof expected === 'object') checkShape(v, expected, name);
    else if (expected === 'object') {
      if (typeof v !== 'object' || v === null) throw new ConfigError(`config key "${name}" must be an object`);
    } else if (expected === 'number|boolean') {
      if (typeof v !== 'number' && typeof v !== 'boolean') throw new ConfigError(`config key "${name}" must be true, false or a number`);
    } else if (expected === 'string[]') {
      if (!Array.isArray(v) || v.some((item) => typeof item !== 'string')) {
        throw new ConfigError(`config key "${name}" must be an array of strings`);
      }
    } else if (typeof v !== expected) throw new ConfigError(`config key "${name}" must be a ${expected}`);
  }
}

function mergeDeep<T>(base: T, patch: unknown): T {
  if (typeof patch !== 'object' || patch === null) return base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, v] of Object.entries(patch)) {
    const current = out[key];
    out[key] =
      typeof v === 'object' && v !== null && !Array.isArray(v) && typeof current === 'object' && current !== null
        ? mergeDeep(current, v)
        : v;
  }
  return out as T;
}

function parsePort(value: unknown, name: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`${name} must be a port number (0-65535), got "${value}"`);
  return n;
}

/**
 * `delivery.smtp.pool` as nodemailer users write it: `true` (the default pool), `false` (one
 * connection, no pool) or a number of connections.
 */
function poolSize(value: unknown): number {
  if (value === undefined || value === true) return DEFAULT_POOL_SIZE;
  if (value === false) return 1;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return value;
  throw new ConfigError(`delivery.smtp.pool must be true, false or a whole number of connections (1 or more), got ${JSON.stringify(value)}`);
}

function parseBool(value: string, name: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

/** `smtp://user:pass@host:587` or `smtps://host:465` -> the SMTP provider settings. */
export function parseUpstream(url: string): SmtpUpstreamConfig {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`--upstream must be smtp://[user:pass@]host:port or smtps://..., got "${url}"`);
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new ConfigError(`--upstream must use smtp:// or smtps://, got "${parsed.protocol}"`);
  }
  const secure = parsed.protocol === 'smtps:';
  return {
    host: parsed.hostname,
    port: parsed.port ? parsePort(parsed.port, '--upstream port') : secure ? 465 : 587,
    secure,
    requireTLS: false,
    auth: parsed.username
      ? { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) }
      : undefined,
    pool: DEFAULT_POOL_SIZE,
  };
}

const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** `a, b,c` -> ['a', 'b', 'c'] (RAVEN_DNS_SERVERS). */
function splitList(value: string): string[] {
  return value.split(',').map((v) => v.trim()).filter(Boolean);
}

function checkSmtpTls(config: RelayConfig): void {
  const { certFile, keyFile, implicit } = config.smtpTls;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError('smtpTls needs both certFile and keyFile (--smtp-tls-cert and --smtp-tls-key)');
  }
  if (implicit && certFile === undefined) throw new ConfigError('smtpTls.implicit needs smtpTls.certFile and smtpTls.keyFile');
  // The sink provider talks plain SMTP to the relay's own listener; with implicit TLS it could not.
  if (implicit && config.delivery.provider === 'sink') {
    throw new ConfigError('smtpTls.implicit needs an upstream provider (delivery.provider "smtp"): the sink delivers over plain SMTP');
  }
}

function checkDns(dns: DnsConfig): void {
  if (!Number.isFinite(dns.recheckIntervalSeconds) || dns.recheckIntervalSeconds < 0) {
    throw new ConfigError(`dns.recheckIntervalSeconds must be a non-negative number of seconds (0 = off), got "${dns.recheckIntervalSeconds}"`);
  }
  try {
    // node:dns's own parser decides what a resolver address is (ip, ip:port, [ipv6]:port).
    if (dns.servers.length > 0) new Resolver().setServers(dns.servers);
  } catch {
    throw new ConfigError(`dns.servers must be IP addresses with an optional port (127.0.0.1:5353), got "${dns.servers.join(', ')}"`);
  }
}

/** The database URL, when one is given, must be PostgreSQL's (SQLite needs none: it lives in dataDir). */
function checkDatabase(url: string | undefined): void {
  if (url === undefined) return;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')) {
    throw new ConfigError('--database must be a postgres:// or postgresql:// URL');
  }
}

export function resolveConfig(
  flags: Partial<RelayFlags> = {},
  env: NodeJS.ProcessEnv = process.env,
): RelayConfig {
  let config = defaultConfig();

  const file = flags.config ?? env.RAVEN_CONFIG;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`);
    }
    checkShape(parsed, FILE_SHAPE, '');
    config = mergeDeep(config, parsed);
  }

  const fromEnv: Partial<RelayFlags> = {
    dataDir: env.RAVEN_DATA_DIR,
    database: env.RAVEN_DATABASE_URL,
    host: env.RAVEN_HOST,
    port: env.RAVEN_PORT,
    smtpPort: env.RAVEN_SMTP_PORT,
    smtpTlsCert: env.RAVEN_SMTP_TLS_CERT_FILE,
    smtpTlsKey: env.RAVEN_SMTP_TLS_KEY_FILE,
    publicHostname: env.RAVEN_PUBLIC_HOSTNAME,
    dnsServer: env.RAVEN_DNS_SERVERS === undefined ? undefined : splitList(env.RAVEN_DNS_SERVERS),
    adminToken: env.RAVEN_ADMIN_TOKEN,
    testClock: env.RAVEN_TEST_CLOCK === undefined ? undefined : parseBool(env.RAVEN_TEST_CLOCK, 'RAVEN_TEST_CLOCK'),
    allowLocalWebhooks:
      env.RAVEN_ALLOW_LOCAL_WEBHOOKS === undefined
        ? undefined
        : parseBool(env.RAVEN_ALLOW_LOCAL_WEBHOOKS, 'RAVEN_ALLOW_LOCAL_WEBHOOKS'),
    domain: env.RAVEN_DOMAIN,
    upstream: env.RAVEN_UPSTREAM,
    logLevel: env.RAVEN_LOG_LEVEL,
  };
  if (env.RAVEN_SECRET_KEY) config.secretKey = env.RAVEN_SECRET_KEY;
  if (env.RAVEN_SMTP_TLS_IMPLICIT !== undefined) {
    config.smtpTls = { ...config.smtpTls, implicit: parseBool(env.RAVEN_SMTP_TLS_IMPLICIT, 'RAVEN_SMTP_TLS_IMPLICIT') };
  }
  if (env.RAVEN_DNS_RECHECK_INTERVAL_SECONDS !== undefined) {
    config.dns = { ...config.dns, recheckIntervalSeconds: Number(env.RAVEN_DNS_RECHECK_INTERVAL_SECONDS) };
  }

  let allowLocalExplicit = config.allowLocalWebhooks ? true : undefined;
  for (const layer of [fromEnv, flags]) {
    if (layer.dataDir !== undefined) config.dataDir = layer.dataDir;
    if (layer.database !== undefined) config.database = layer.database;
    if (layer.host !== undefined) config.host = layer.host;
    if (layer.port !== undefined) config.port = parsePort(layer.port, 'port');
    if (layer.smtpPort !== undefined) config.smtpPort = parsePort(layer.smtpPort, 'smtp port');
    if (layer.smtpTlsCert !== undefined) config.smtpTls = { ...config.smtpTls, certFile: layer.smtpTlsCert };
    if (layer.smtpTlsKey !== undefined) config.smtpTls = { ...config.smtpTls, keyFile: layer.smtpTlsKey };
    if (layer.publicHostname !== undefined) config.publicHostname = layer.publicHostname;
    if (layer.dnsServer !== undefined) config.dns = { ...config.dns, servers: layer.dnsServer };
    if (layer.adminToken !== undefined) config.adminToken = layer.adminToken;
    if (layer.testClock !== undefined) config.testClock = layer.testClock;
    if (layer.allowLocalWebhooks !== undefined) allowLocalExplicit = layer.allowLocalWebhooks;
    if (layer.domain !== undefined) config.domain = layer.domain;
    if (layer.upstream !== undefined) {
      // The URL says host, port, TLS mode and login; requireTLS and pool, which it cannot say, stay
      // as the file set them (credentials in RAVEN_UPSTREAM, the rest in the file).
      const upstream = parseUpstream(layer.upstream);
      const { requireTLS, pool } = { ...upstream, ...config.delivery.smtp };
      config.delivery = { ...config.delivery, provider: 'smtp', smtp: { ...upstream, requireTLS, pool } };
    }
    if (layer.logLevel !== undefined) config.logLevel = layer.logLevel as RelayConfig['logLevel'];
  }

  if (!LOG_LEVELS.includes(config.logLevel)) {
    throw new ConfigError(`logLevel must be one of ${LOG_LEVELS.join(', ')}, got "${config.logLevel}"`);
  }
  if (config.delivery.provider !== 'sink' && config.delivery.provider !== 'smtp') {
    throw new ConfigError(`delivery.provider must be "sink" or "smtp", got "${config.delivery.provider}"`);
  }
  if (config.delivery.provider === 'smtp' && !config.delivery.smtp?.host) {
    throw new ConfigError('delivery.provider "smtp" needs delivery.smtp.host (or --upstream)');
  }
  for (const [key, value] of Object.entries(config.limits)) {
    if (!Number.isFinite(value) || value < 0) throw new ConfigError(`limits.${key} must be a non-negative number`);
  }
  if (!/^[a-z0-9.-]+\.[a-z0-9-]+$/i.test(config.domain)) {
    throw new ConfigError(`domain must be a domain name, got "${config.domain}"`);
  }
  if (config.publicHostname !== undefined && !HOSTNAME.test(config.publicHostname)) {
    throw new ConfigError(`publicHostname must be a host name, got "${config.publicHostname}"`);
  }
  if (config.delivery.smtp) config.delivery.smtp = { ...config.delivery.smtp, pool: poolSize(config.delivery.smtp.pool) };
  checkDatabase(config.database);
  if (!Number.isFinite(config.delivery.leaseSeconds) || config.delivery.leaseSeconds < 1) {
    throw new ConfigError('delivery.leaseSeconds must be a number of seconds, at least 1');
  }
  checkSmtpTls(config);
  checkDns(config.dns);
  // Development mode (sink) allows local webhooks by default; with an upstream only when asked.
  config.allowLocalWebhooks = allowLocalExplicit ?? config.delivery.provider === 'sink';
  config.dataDir = path.resolve(config.dataDir);
  return config;
}
