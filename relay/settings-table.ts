// Every relay setting, declared once: its key in the configuration (and the JSON file), its default,
// its RAVEN_* variable, its `ravenctl relay start` flag and what README's configuration table says
// of it. From this table come the RelayConfig type, the defaults, the JSON file's shape and the
// environment and flag layers (relay/config.ts), the options of `relay start`
// (cli/commands/relay/start.ts) and README's table (test/unit/settings-table.test.ts compares).
// A new setting is one row here, plus its check in config.ts when it needs one.
//
// Rows are in the order `relay start --help` lists its flags and README lists its rows.
import { DEFAULT_IDEMPOTENCY_RETENTION_DAYS } from './domain/idempotency.js';
import { SPEC_MAX_RECIPIENTS } from './domain/send-request.js';

/** How a value is read from a RAVEN_* variable or a flag, and checked in the JSON file. */
export type SettingKind = 'string' | 'number' | 'port' | 'boolean' | 'strings' | 'object';

export interface SettingSpec {
  kind: SettingKind;
  /** Set when nothing else sets it; without one the key is optional (unset). */
  default?: unknown;
  /** The values a string may take (checked in config.ts); the setting's type is their union. */
  choices?: readonly string[];
  /** An object's type (kind 'object'): `valueType: typeOf<T>()`. */
  valueType?: unknown;
  /** RAVEN_* variable: booleans read 1/0, true/false, yes/no, on/off; lists are comma-separated. */
  env?: string;
  /** An empty variable counts as unset. */
  envIgnoresEmpty?: boolean;
  /** `relay start` flag, commander's syntax (`--port <port>`); a list's flag is repeatable. */
  flag?: string;
  /** The flag's help line. */
  help?: string;
  /** Names the setting in the messages of a bad port. */
  label?: string;
  /** README's configuration table (for rows with a flag or a variable): the default and the meaning as it words them. */
  readme?: { default: string; meaning: string };
  /** The JSON file's shape of an object value, as checkShape reads it. */
  shape?: FileShape;
  /** Only a flag or variable, not a key of the configuration or the file (config.ts applies it). */
  input?: true;
}

export type FileShape = { [key: string]: 'string' | 'number' | 'boolean' | 'number|boolean' | 'string[]' | 'object' | FileShape };

/** Any row, as code that walks the table reads it. */
export type Setting = SettingSpec & { key: string; optional: boolean };

type Row<K extends string, S extends SettingSpec> = S & {
  key: K;
  /** Without a default. */
  optional: S extends { default: unknown } ? false : true;
};

function setting<const K extends string, const S extends SettingSpec>(key: K, spec: S): Row<K, S> {
  return { ...spec, key, optional: !('default' in spec) } as Row<K, S>;
}

/** An object setting's type, carried by the row (valueType). */
const typeOf = <T>() => undefined as unknown as T;

export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;
export const PROVIDERS = ['sink', 'smtp'] as const;

/** Connections kept open to the upstream when the configuration does not say (or says `true`). */
export const DEFAULT_POOL_SIZE = 5;

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
  /**
   * PEM file of the certificate authorities to trust for the upstream's TLS certificate, besides
   * the system's (NODE_EXTRA_CA_CERTS): a private CA, or a test upstream's self-signed certificate.
   */
  ca?: string;
}

export const SETTINGS = [
  setting('dataDir', {
    kind: 'string', default: '.raven', env: 'RAVEN_DATA_DIR', flag: '--data-dir <dir>',
    help: 'directory for the database and secrets, created when missing (default: ./.raven)',
    readme: { default: '`.raven`', meaning: 'SQLite database, admin token and secret key (created when missing)' },
  }),
  /** A postgres:// URL: everything is stored in PostgreSQL instead of SQLite in dataDir. */
  setting('database', {
    kind: 'string', env: 'RAVEN_DATABASE_URL', flag: '--database <url>',
    help: 'store everything in PostgreSQL (postgres://...) instead of SQLite in the data dir; relays may share it (default: $RAVEN_DATABASE_URL)',
    readme: {
      default: 'none (SQLite in the data dir)',
      meaning: '`postgres://user:pass@host:5432/raven`: store everything in PostgreSQL; several relays may share it (see [Several relays](#several-relays-on-one-postgresql))',
    },
  }),
  setting('host', {
    kind: 'string', default: '127.0.0.1', env: 'RAVEN_HOST', flag: '--host <host>', help: 'address to bind HTTP and SMTP (default: 127.0.0.1)',
    readme: { default: '`127.0.0.1`', meaning: 'HTTP listen address' },
  }),
  setting('port', {
    kind: 'port', default: 7700, env: 'RAVEN_PORT', flag: '--port <port>', label: 'port', help: 'HTTP port, 0 for a free one (default: 7700)',
    readme: { default: '`7700`', meaning: 'HTTP port (`0` picks a free one)' },
  }),
  setting('smtpHost', { kind: 'string', default: '127.0.0.1' }),
  setting('smtpPort', {
    kind: 'port', default: 7725, env: 'RAVEN_SMTP_PORT', flag: '--smtp-port <port>', label: 'smtp port',
    help: 'SMTP sink port, 0 for a free one (default: 7725)',
    readme: { default: '`7725`', meaning: 'SMTP sink port (`0` picks a free one)' },
  }),
  // 587 is the submission port (RFC 6409), as 7725 stands for 25.
  /** SMTP submission (CONTRACT section 9), on smtpHost: the default port when HTTP and SMTP are on
   * theirs, else a free one (resolveConfig), so relays started side by side never collide. */
  setting('submissionPort', {
    kind: 'port', default: 7587, env: 'RAVEN_SUBMISSION_PORT', flag: '--submission-port <port>', label: 'submission port',
    help: 'SMTP submission port (AUTH with an API key), 0 for a free one (default: 7587 beside the default ports, else a free one)',
    readme: {
      default: '`7587`; a free one when the HTTP or SMTP port is set and this one is not',
      meaning: '[SMTP submission](#smtp-submission) port, on the SMTP host (`0` picks a free one)',
    },
  }),
  /** TLS for the SMTP listener: STARTTLS offered (or implicit TLS) when a certificate is set; both files or neither. */
  setting('smtpTls.certFile', {
    kind: 'string', env: 'RAVEN_SMTP_TLS_CERT_FILE', flag: '--smtp-tls-cert <file>',
    help: 'PEM certificate chain for the SMTP listener: STARTTLS is offered (with --smtp-tls-key)',
    readme: { default: 'none (plain SMTP)', meaning: 'PEM certificate chain: the SMTP listener offers STARTTLS with it' },
  }),
  setting('smtpTls.keyFile', {
    kind: 'string', env: 'RAVEN_SMTP_TLS_KEY_FILE', flag: '--smtp-tls-key <file>', help: 'PEM private key of --smtp-tls-cert',
    readme: { default: 'none', meaning: 'PEM private key of that certificate' },
  }),
  /** Implicit TLS from the first byte (port 465 style) instead of offering STARTTLS. */
  setting('smtpTls.implicit', {
    kind: 'boolean', default: false, env: 'RAVEN_SMTP_TLS_IMPLICIT',
    readme: { default: '`false`', meaning: 'implicit TLS (port 465 style) instead of STARTTLS; needs an upstream provider' },
  }),
  /** The relay's public DNS name: the MX and SPF target of domain records, the SMTP greeting. */
  setting('publicHostname', {
    kind: 'string', env: 'RAVEN_PUBLIC_HOSTNAME', flag: '--public-hostname <name>',
    help: "the relay's public DNS name: MX/SPF target of domain records, SMTP greeting",
    readme: { default: '`localhost` / the SMTP address', meaning: "the relay's public DNS name: MX and SPF target in domain records, SMTP greeting" },
  }),
  /** SpamAssassin's spamd (`host:port`) for the spam check of captured mail; none = the check says how to turn it on. */
  setting('spamd', {
    kind: 'string', env: 'RAVEN_SPAMD', flag: '--spamd <host:port>',
    help: 'SpamAssassin spamd for the spam check of captured mail (default: $RAVEN_SPAMD, else none)',
    readme: { default: 'none', meaning: "SpamAssassin's spamd for the spam check of captured mail" },
  }),
  /** Resolvers for domain verification, `ip` or `ip:port` (`[ipv6]:port`); empty = the system's. */
  setting('dns.servers', {
    kind: 'strings', default: [], env: 'RAVEN_DNS_SERVERS', flag: '--dns-server <address>',
    help: "DNS resolver for domain verification, ip or ip:port; repeatable (default: the system's)",
    readme: { default: "the system's resolvers", meaning: 'resolvers for domain verification, `ip` or `ip:port`' },
  }),
  // Five minutes: DNS changes usually show within minutes, and a pending domain costs a few
  // queries per check.
  /** Pending domains are rechecked this often (relay clock); 0 turns the recheck off. */
  setting('dns.recheckIntervalSeconds', {
    kind: 'number', default: 300, env: 'RAVEN_DNS_RECHECK_INTERVAL_SECONDS',
    readme: { default: '`300`', meaning: 'how often pending domains are rechecked (`0`: never)' },
  }),
  setting('adminToken', {
    kind: 'string', env: 'RAVEN_ADMIN_TOKEN', flag: '--admin-token <token>',
    help: 'admin API token (default: $RAVEN_ADMIN_TOKEN, else generated and stored)',
    readme: { default: 'generated, stored in the data dir (0600)', meaning: 'bearer token of `/admin/v1`' },
  }),
  setting('testClock', {
    kind: 'boolean', default: false, env: 'RAVEN_TEST_CLOCK', flag: '--test-clock', help: 'enable the controllable test clock (/admin/v1/clock)',
    readme: { default: 'off', meaning: 'enables `GET /admin/v1/clock` and `POST /admin/v1/clock/advance`' },
  }),
  // Development mode (the sink) allows local webhooks; an upstream provider turns this off unless
  // asked for (resolved in resolveConfig).
  setting('allowLocalWebhooks', {
    kind: 'boolean', default: false, env: 'RAVEN_ALLOW_LOCAL_WEBHOOKS', flag: '--allow-local-webhooks',
    help: 'allow webhook endpoints that are not public https:443',
    readme: {
      default: 'on with the sink, off with an upstream',
      meaning: 'webhook URLs on loopback/private addresses, over http or https, on any port (metadata hosts stay refused)',
    },
  }),
  /** The verified domain of the bootstrap project. */
  setting('domain', {
    kind: 'string', default: 'example.test', env: 'RAVEN_DOMAIN', flag: '--domain <domain>',
    help: 'verified domain created in a fresh data dir (default: example.test)',
    readme: { default: '`example.test`', meaning: 'verified domain of the bootstrap project' },
  }),
  setting('upstream', {
    kind: 'string', input: true, env: 'RAVEN_UPSTREAM', flag: '--upstream <url>',
    help: 'deliver through this SMTP server: smtp://[user:pass@]host:port or smtps://...',
    readme: { default: 'none (the sink)', meaning: '`smtp://user:pass@host:587` or `smtps://host:465` for real delivery' },
  }),
  // An input: config.ts puts it in delivery.smtp.ca, which needs an upstream.
  setting('upstreamCa', {
    kind: 'string', input: true, env: 'RAVEN_UPSTREAM_CA_FILE', flag: '--upstream-ca <file>',
    help: "PEM certificate authorities to trust for the upstream's TLS certificate, besides the system's (default: $RAVEN_UPSTREAM_CA_FILE)",
    readme: {
      default: "none (the system's roots)",
      meaning: "PEM certificate authorities trusted for the upstream's certificate, besides the system's (see [Real delivery](#real-delivery))",
    },
  }),
  setting('config', {
    kind: 'string', input: true, env: 'RAVEN_CONFIG', flag: '--config <file>',
    help: 'JSON configuration file (flags override it, RAVEN_* variables sit between)',
    readme: { default: 'none', meaning: 'JSON configuration file' },
  }),
  setting('logLevel', {
    kind: 'string', default: 'info', choices: LOG_LEVELS, env: 'RAVEN_LOG_LEVEL', flag: '--log-level <level>',
    help: 'silent, error, warn, info or debug; logs go to stderr (default: info)',
    readme: { default: '`info`', meaning: '`silent`, `error`, `warn`, `info`, `debug` (JSON lines on stderr)' },
  }),
  /** Key for secrets at rest; generated into the data directory when absent. */
  setting('secretKey', {
    kind: 'string', env: 'RAVEN_SECRET_KEY', envIgnoresEmpty: true,
    readme: { default: 'generated in the data dir', meaning: 'key that encrypts webhook secrets and DKIM keys at rest' },
  }),

  // limits: the specification's values (section 8) unless said otherwise.
  /** The complete JSON request. */
  setting('limits.maxRequestBytes', { kind: 'number', default: 10 * 1024 * 1024 }),
  setting('limits.maxRecipients', { kind: 'number', default: SPEC_MAX_RECIPIENTS }),
  /** Accepted requests per second per key / per workspace; per minute per rr_test_ key. */
  setting('limits.keyPerSecond', { kind: 'number', default: 100 }),
  setting('limits.workspacePerSecond', { kind: 'number', default: 200 }),
  setting('limits.testKeyPerMinute', { kind: 'number', default: 15 }),
  /** Accepted recipients per UTC month. */
  setting('limits.testKeyMonthlyRecipients', { kind: 'number', default: 1000 }),
  setting('limits.workspaceMonthlyRecipients', { kind: 'number', default: 5000 }),
  /** Bodies of terminal emails are erased this long after they end. */
  setting('limits.bodyRetentionDays', { kind: 'number', default: 7 }),
  /** Idempotency records are kept this long (the contract asks for at least 24 hours). */
  setting('limits.idempotencyRetentionDays', { kind: 'number', default: DEFAULT_IDEMPOTENCY_RETENTION_DAYS }),
  /** An HTTP client that has not sent its whole request head by then is answered 408 and disconnected (slow-loris). */
  setting('limits.httpHeadersTimeoutMs', { kind: 'number', default: 15_000 }),
  // A 10 MiB JSON request can grow by base64/quoted-printable encoding; 25 MiB leaves room for it.
  /** The SMTP sink: larger messages are refused 552, connections past the count 421, and a session
   * idle this long (real time) is closed. */
  setting('limits.smtpMaxMessageBytes', { kind: 'number', default: 25 * 1024 * 1024 }),
  setting('limits.smtpMaxClients', { kind: 'number', default: 100 }),
  setting('limits.smtpSocketTimeoutMs', { kind: 'number', default: 60_000 }),
  // Ten minutes moves a 25 MiB message at about 45 KB/s; slower than that is not a mail client.
  /** A session is closed this long after it opened, however busy: a client trickling just under
   * the idle time-out cannot hold a connection slot for ever. */
  setting('limits.smtpMaxSessionMs', { kind: 'number', default: 600_000 }),

  setting('delivery.provider', { kind: 'string', default: 'sink', choices: PROVIDERS }),
  /** The upstream (provider smtp): from the file, or from an upstream URL (--upstream, RAVEN_UPSTREAM). */
  setting('delivery.smtp', {
    kind: 'object',
    valueType: typeOf<SmtpUpstreamConfig>(),
    shape: { host: 'string', port: 'number', secure: 'boolean', requireTLS: 'boolean', auth: 'object', pool: 'number|boolean', ca: 'string' },
  }),
  /** The provider's account-level limits: recipient-weighted rate and daily allowance (0 = none). */
  setting('delivery.recipientsPerSecond', { kind: 'number', default: 0 }),
  setting('delivery.dailyRecipients', { kind: 'number', default: 0 }),
  /** Concurrent dispatches; unset: sized to the provider (deliveryConcurrency). */
  setting('delivery.concurrency', { kind: 'number' }),
  // Long enough that a busy relay renews in time (every third of it), short enough that the
  // recipients of a dead relay learn their fate within a minute.
  /** On PostgreSQL: how long a relay's claim on a job lasts without renewal (real time). A relay
   * renews its claims while it dispatches; when one dies, its jobs are settled by the others this
   * long after its last renewal. */
  setting('delivery.leaseSeconds', { kind: 'number', default: 30 }),
] as const;

export type SettingRow = (typeof SETTINGS)[number];

// The configuration's type, built from the rows' keys: `limits.keyPerSecond` is
// `config.limits.keyPerSecond`, a row without a default an optional key, an input no key at all.
type ValueOf<R> = R extends { kind: 'object'; valueType: infer T }
  ? T
  : R extends { choices: readonly (infer C)[] }
    ? C
    : R extends { kind: 'number' | 'port' }
      ? number
      : R extends { kind: 'boolean' }
        ? boolean
        : R extends { kind: 'strings' }
          ? string[]
          : string;
type Head<K extends string> = K extends `${infer H}.${string}` ? H : never;
type Under<R, G extends string> = R extends { key: `${G}.${infer Rest}` } ? Omit<R, 'key'> & { key: Rest } : never;
type Leaf<K extends string> = K extends `${string}.${string}` ? never : K;
type ConfigOf<R extends { key: string; optional: boolean }> = {
  [S in R as S['optional'] extends true ? never : Leaf<S['key']>]: ValueOf<S>;
} & { [S in R as S['optional'] extends true ? Leaf<S['key']> : never]?: ValueOf<S> } & {
  [G in Head<R['key']>]: ConfigOf<Under<R, G>>;
};
type Inputs = Extract<SettingRow, { input: true }>;

/** The resolved configuration (relay/config.ts resolveConfig). */
export type SettingsConfig = ConfigOf<Exclude<SettingRow, Inputs>>;

type CamelCase<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<CamelCase<B>>}` : S;
type FlagName<F> = F extends `--${infer N} ${string}` ? CamelCase<N> : F extends `--${infer N}` ? CamelCase<N> : never;
type FlagValue<R> = R extends { kind: 'boolean' } ? boolean : R extends { kind: 'strings' } ? string[] : R extends { kind: 'port' } ? number | string : string;

/** What `relay start`'s flags give (commander's option names), each overriding the layers before it. */
export type SettingFlags = { [R in Extract<SettingRow, { flag: string }> as FlagName<R['flag']>]: FlagValue<R> };

/** The option name commander gives a flag: `--smtp-tls-cert <file>` -> smtpTlsCert. */
export function flagName(flag: string): string {
  const long = /^--([a-z0-9-]+)/.exec(flag)![1]!;
  return long.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** README's configuration table, rendered from the rows that have a flag or a variable. */
export function readmeConfigurationTable(): string {
  const lines = ['| flag | environment | default | meaning |', '|---|---|---|---|'];
  for (const row of SETTINGS as readonly Setting[]) {
    if (!row.readme || (!row.flag && !row.env)) continue;
    const list = row.kind === 'strings';
    const flag = row.flag ? `\`${row.flag}\`${list ? ' (repeatable)' : ''}` : '';
    const env = row.env ? `\`${row.env}\`${list ? ' (comma-separated)' : ''}` : '';
    lines.push(`|${[flag, env, row.readme.default, row.readme.meaning].map((cell) => (cell ? ` ${cell} ` : ' ')).join('|')}|`);
  }
  return lines.join('\n');
}
