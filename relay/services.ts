// What the parts of a running relay share. Built once by app.ts.
import type { RelayBus } from './bus.js';
import type { Clock } from './clock.js';
import type { RelayConfig } from './config.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { SecretBox } from './secrets.js';
import type { Db } from './storage/db.js';
import type { RateLimiter } from './domain/rate-limits.js';
import type { KeyCache } from './domain/auth.js';
import type { KeyUse } from './domain/key-use.js';
import type { DkimKeyPair } from './domain/dkim-key-pair.js';
import type { DashboardSessions } from './dashboard/sessions.js';
import type { MessageWaits } from './inbox/message-waits.js';
import type { CheckSummary } from 'raven-email-sdk';
import type { AuthFailures } from './auth-failures.js';
import type { CaptureActivity } from './inbox/capture-activity.js';

/**
 * The checks badges of captured mail (relay/inbox/checks/summaries.ts), computed lazily in the
 * background and cached. Declared here: the checks themselves read the services.
 */
export interface CheckSummaries {
  /** Each entry with its badge (null until computed); entries without one are queued. */
  attach<T extends { id: string }>(entries: readonly T[]): Promise<Array<T & { checks: CheckSummary | null }>>;
  /** Stores the verdict of checks that just ran; answers the badge as stored. */
  store(id: string, verdict: Pick<CheckSummary, 'verdict' | 'reasons'>): Promise<CheckSummary>;
  /** Resolves once every queued message has its badge (tests, bench). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface RelayServices {
  /** Where new domains' DKIM key pairs come from: newDkimKeyPair unless the start said otherwise (StartOptions.dkimKeyPairs). */
  dkimKeyPair(): DkimKeyPair;
  db: Db;
  clock: Clock;
  config: RelayConfig;
  log: Logger;
  secrets: SecretBox;
  /** What committed, for the parts that act on it (every event: bus.ts). */
  bus: RelayBus;
  rateLimiter: RateLimiter;
  /** Authenticated API keys; cleared by every admin write to keys, projects or workspaces. */
  keys: KeyCache;
  /** Records when each key last authenticated (the dashboard's "last used"). */
  keyUse: KeyUse;
  /** In-memory counters for GET /metrics. */
  metrics: Metrics;
  adminToken: string;
  /** Dashboard sign-ins (session cookies, the one-time link printed at start). */
  sessions: DashboardSessions;
  /** Open waits for captured mail (GET /admin/v1/messages/wait). */
  messageWaits: MessageWaits;
  /** The checks badges of captured mail, computed lazily in the background and cached. */
  checkSummaries: CheckSummaries;
  /** Whether the sink is capturing: the inbox's background work (index batches, badges) yields to it. */
  captureActivity: CaptureActivity;
  /** Wrong admin tokens (Bearer header or dashboard sign-in) by client address: slowed, then refused. */
  adminTokenFailures: AuthFailures;
  /** Set by app.ts: whether each part is up, for /readyz. */
  health: { database: boolean; http: boolean; smtp: boolean; worker: boolean };
}
