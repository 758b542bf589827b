// Relay configuration: typed defaults, then the JSON file (--config), then RAVEN_* variables, then
// flags. Unknown keys and bad values stop start-up with a message that names them.
import { Resolver } from 'node:dns';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_POOL_SIZE,
  flagName,
  LOG_LEVELS,
  SETTINGS,
  type FileShape,
  type Setting,
  type SettingFlags,
  type SettingsConfig,
  type SmtpUpstreamConfig,
} from './settings-table.js';

export { DEFAULT_POOL_SIZE, type SmtpUpstreamConfig };

/** Every setting: relay/settings-table.ts. */
export type RelayConfig = SettingsConfig;
export type LimitsConfig = RelayConfig['limits'];
export type DeliveryConfig = RelayConfig['delivery'];
export type DnsConfig = RelayConfig['dns'];
export type SmtpTlsConfig = RelayConfig['smtpTls'];
/** What `relay start`'s flags give, by commander's option name. */
export type RelayFlags = SettingFlags;

// The sink is our own listener on loopback: many sessions cost little and hide the commit latency
// of each capture. An upstream gets what a mail provider usually allows.
const SINK_CONCURRENCY = 64;
const UPSTREAM_CONCURRENCY = 8;

/**
 * Concurrent dispatches: the configured number, else the provider's default; into the sink never
 * more than its client limit (limits.smtpMaxClients), which would refuse the sessions past it with
 * 421 and leave their emails to a retry. The sessions the threads hold toward it, busy, idle,
 * being reset or closing, stay within that limit too (delivery/session-budget.ts), so a
 * concurrency at the limit itself meets no 421.
 */
export function deliveryConcurrency(config: Pick<RelayConfig, 'delivery' | 'limits'>): number {
  const { delivery } = config;
  if (delivery.provider !== 'sink') return Math.max(1, delivery.concurrency ?? UPSTREAM_CONCURRENCY);
  return Math.max(1, Math.min(delivery.concurrency ?? SINK_CONCURRENCY, config.limits.smtpMaxClients));
}

const ROWS: readonly Setting[] = SETTINGS;
/** The rows that are keys of the configuration (not only a flag or a variable). */
const CONFIG_ROWS = ROWS.filter((row) => !row.input);

/** Sets `a.b.c` in a nested object, making the objects on the way. */
function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function defaultConfig(): RelayConfig {
  const config: Record<string, unknown> = {};
  for (const row of CONFIG_ROWS) if (!row.optional) setPath(config, row.key, structuredClone(row.default));
  return config as RelayConfig;
}

/** The JSON file's shape: every configuration key, with its type. */
const FILE_SHAPE: FileShape = (() => {
  const shape: Record<string, unknown> = {};
  const fileType = { string: 'string', number: 'number', port: 'number', boolean: 'boolean', strings: 'string[]' } as const;
  for (const row of CONFIG_ROWS) setPath(shape, row.key, row.kind === 'object' ? row.shape : fileType[row.kind]);
  return shape as FileShape;
})();

function checkShape(value: unknown, shape: FileShape, where: string): void {
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

/** A RAVEN_* variable's text as the setting's value. */
function fromText(row: Setting, text: string): unknown {
  switch (row.kind) {
    case 'boolean':
      return parseBool(text, row.env!);
    case 'number':
      return Number(text);
    case 'port':
      return parsePort(text, row.label ?? row.key);
    case 'strings':
      return splitList(text);
    default:
      return text;
  }
}

export function resolveConfig(
  flags: Partial<RelayFlags> = {},
  env: NodeJS.ProcessEnv = process.env,
): RelayConfig {
  let config = defaultConfig();
  let fileSet: Record<string, unknown> = {};

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
    fileSet = parsed as Record<string, unknown>;
  }

  // The environment, then the flags, each over what came before, in the table's order.
  const setByLayers = new Set<string>();
  let upstreamCa: string | undefined;
  const apply = (row: Setting, value: unknown) => {
    setByLayers.add(row.key);
    if (row.key === 'upstream') {
      // The URL says host, port, TLS mode and login; requireTLS, pool and ca, which it cannot say,
      // stay as the file set them (credentials in RAVEN_UPSTREAM, the rest in the file).
      const upstream = parseUpstream(value as string);
      const { requireTLS, pool, ca } = { ...upstream, ...config.delivery.smtp };
      config.delivery = { ...config.delivery, provider: 'smtp', smtp: { ...upstream, requireTLS, pool, ...(ca === undefined ? {} : { ca }) } };
    } else if (row.key === 'upstreamCa') upstreamCa = value as string;
    else if (!row.input) setPath(config as unknown as Record<string, unknown>, row.key, value);
  };
  for (const row of ROWS) {
    const raw = row.env === undefined ? undefined : env[row.env];
    if (raw === undefined || (raw === '' && row.envIgnoresEmpty)) continue;
    apply(row, fromText(row, raw));
  }
  for (const row of ROWS) {
    const value = row.flag === undefined ? undefined : (flags as Record<string, unknown>)[flagName(row.flag)];
    if (value === undefined) continue;
    apply(row, row.kind === 'port' ? parsePort(value as number | string, row.label ?? row.key) : value);
  }
  const allowLocalExplicit = setByLayers.has('allowLocalWebhooks') || config.allowLocalWebhooks ? config.allowLocalWebhooks : undefined;

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
  if (config.spamd !== undefined && !/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i.test(config.spamd)) {
    throw new ConfigError(`spamd must be HOST:PORT (127.0.0.1:783), got "${config.spamd}"`);
  }
  if (config.delivery.smtp) config.delivery.smtp = { ...config.delivery.smtp, pool: poolSize(config.delivery.smtp.pool) };
  if (upstreamCa !== undefined) {
    if (config.delivery.provider !== 'smtp' || !config.delivery.smtp) {
      throw new ConfigError('--upstream-ca (RAVEN_UPSTREAM_CA_FILE) needs an upstream provider (--upstream or delivery.smtp)');
    }
    config.delivery.smtp = { ...config.delivery.smtp, ca: upstreamCa };
  }
  checkDatabase(config.database);
  if (!Number.isFinite(config.delivery.leaseSeconds) || config.delivery.leaseSeconds < 1) {
    throw new ConfigError('delivery.leaseSeconds must be a number of seconds, at least 1');
  }
  // The default submission port only beside the default HTTP and SMTP ports (CONTRACT section 9).
  const set = (key: 'port' | 'smtpPort' | 'submissionPort') => fileSet[key] !== undefined || setByLayers.has(key);
  if (!set('submissionPort') && (set('port') || set('smtpPort'))) config.submissionPort = 0;
  config.submissionPort = parsePort(config.submissionPort, 'submissionPort');
  checkSmtpTls(config);
  checkDns(config.dns);
  // Development mode (sink) allows local webhooks by default; with an upstream only when asked.
  config.allowLocalWebhooks = allowLocalExplicit ?? config.delivery.provider === 'sink';
  config.dataDir = path.resolve(config.dataDir);
  return config;
}
