// Relay configuration: typed defaults, then the JSON file (--config), then RAVEN_* variables, then
// flags. Unknown keys and bad values stop start-up with a message that names them.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface SmtpUpstreamConfig {
  host: string;
  port: number;
  /** Implicit TLS (smtps). */
  secure: boolean;
  /** Refuse to send when STARTTLS is not offered. */
  requireTLS: boolean;
  auth?: { user: string; pass: string };
  /** Pooled connections to the upstream. */
  pool: number;
}

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
  /** Concurrent dispatches. */
  concurrency: number;
}

export interface RelayConfig {
  dataDir: string;
  host: string;
  port: number;
  smtpHost: string;
  smtpPort: number;
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
}

export interface RelayFlags {
  dataDir: string;
  host: string;
  port: number | string;
  smtpPort: number | string;
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
    testClock: false,
    // Development mode (the sink) allows local webhooks; an upstream provider turns this off
    // unless asked for (resolved in resolveConfig).
    allowLocalWebhooks: false,
    domain: 'example.test',
    logLevel: 'info',
    limits: {
      maxRequestBytes: 10 * 1024 * 1024,
      maxRecipients: 50,
      keyPerSecond: 100,
      workspacePerSecond: 200,
      testKeyPerMinute: 15,
      testKeyMonthlyRecipients: 1000,
      workspaceMonthlyRecipients: 5000,
      bodyRetentionDays: 7,
      idempotencyRetentionDays: 7,
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
      concurrency: 8,
    },
  };
}

type Shape = { [key: string]: 'string' | 'number' | 'boolean' | Shape | 'object' };

const FILE_SHAPE: Shape = {
  dataDir: 'string',
  host: 'string',
  port: 'number',
  smtpHost: 'string',
  smtpPort: 'number',
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
    smtpMaxMessageBytes: 'number',
    smtpMaxClients: 'number',
    smtpSocketTimeoutMs: 'number',
    smtpMaxSessionMs: 'number',
  },
  delivery: {
    provider: 'string',
    smtp: { host: 'string', port: 'number', secure: 'boolean', requireTLS: 'boolean', auth: 'object', pool: 'number' },
    recipientsPerSecond: 'number',
    dailyRecipients: 'number',
    concurrency: 'number',
  },
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
    pool: 5,
  };
}

const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;

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
    host: env.RAVEN_HOST,
    port: env.RAVEN_PORT,
    smtpPort: env.RAVEN_SMTP_PORT,
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

  let allowLocalExplicit = config.allowLocalWebhooks ? true : undefined;
  for (const layer of [fromEnv, flags]) {
    if (layer.dataDir !== undefined) config.dataDir = layer.dataDir;
    if (layer.host !== undefined) config.host = layer.host;
    if (layer.port !== undefined) config.port = parsePort(layer.port, 'port');
    if (layer.smtpPort !== undefined) config.smtpPort = parsePort(layer.smtpPort, 'smtp port');
    if (layer.adminToken !== undefined) config.adminToken = layer.adminToken;
    if (layer.testClock !== undefined) config.testClock = layer.testClock;
    if (layer.allowLocalWebhooks !== undefined) allowLocalExplicit = layer.allowLocalWebhooks;
    if (layer.domain !== undefined) config.domain = layer.domain;
    if (layer.upstream !== undefined) config.delivery = { ...config.delivery, provider: 'smtp', smtp: parseUpstream(layer.upstream) };
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
  // Development mode (sink) allows local webhooks by default; with an upstream only when asked.
  config.allowLocalWebhooks = allowLocalExplicit ?? config.delivery.provider === 'sink';
  config.dataDir = path.resolve(config.dataDir);
  return config;
}
