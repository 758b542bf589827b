// Starts the real relay in-process on ephemeral ports with a temporary data directory, behind the
// contract proxy, so every response a test sees is also checked against openapi.yaml.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { startRelay, type Relay, type StartOptions } from '../../relay/app.js';
import type { RelayConfig, RelayFlags } from '../../relay/config.js';
import { TEST_BACKEND, freshPostgresDatabase, seedSqliteDataDir } from './backend.js';
import { startContractProxy } from './contract.js';
import { threadBootMs } from './threads-booted.js';
import { testDkimKeyPair } from './dkim-keys.js';

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestRelay {
  relay: Relay;
  /** The relay's URL through the contract-checking proxy: use this one. */
  url: string;
  directUrl: string;
  apiKey: string;
  adminToken: string;
  workspaceId: string;
  projectId: string;
  domain: string;
  dataDir: string;
  violations: string[];
  /** Calls the public API with a key (the bootstrap key by default). */
  api<T = any>(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<CallResult<T>>;
  /** Calls the admin API with the admin token. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<CallResult<T>>;
  /** Sends a minimal valid email; fields override the defaults. */
  send(fields?: Record<string, unknown>, options?: { key?: string; idempotencyKey?: string }): Promise<CallResult>;
  /** Waits until the email has no recipient left queued or delivery_delayed. */
  waitForFinal(emailId: string, options?: { key?: string; timeoutMs?: number }): Promise<any>;
  stop(): Promise<void>;
}

export interface TestRelayOptions {
  flags?: Partial<RelayFlags>;
  overrides?: (config: RelayConfig) => void;
  dataDir?: string;
  keepDataDir?: boolean;
  /** 'spec' keeps the specification's rate limits and quotas; by default tests lift the ones
   * that would stop a test sending a few hundred emails (15 per minute per development key). */
  limits?: 'spec' | 'relaxed';
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export async function call<T = any>(
  baseUrl: string,
  method: string,
  urlPath: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + urlPath, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export async function startTestRelay(options: TestRelayOptions = {}): Promise<TestRelay> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'raven-test-')));
  // On the postgres backend a database of its own, unless the test names one (relays sharing it).
  const database = TEST_BACKEND === 'postgres' && options.flags?.database === undefined ? await freshPostgresDatabase() : undefined;
  // On SQLite the data directory (a new one: this function bootstraps) starts with the run's migrated database.
  if (TEST_BACKEND === 'sqlite' && options.flags?.database === undefined) await seedSqliteDataDir(options.flags?.dataDir ?? dataDir);
  const startOptions: StartOptions = {
    dkimKeyPairs: testDkimKeyPair,
    flags: { dataDir, port: 0, smtpPort: 0, adminToken: ADMIN_TOKEN, logLevel: 'error', ...(database ? { database: database.url } : {}), ...options.flags },
    env: {},
    overrides: (config) => {
      if (options.limits !== 'spec') {
        config.limits.testKeyPerMinute = 1_000_000;
        config.limits.keyPerSecond = 1_000_000;
        config.limits.workspacePerSecond = 1_000_000;
        config.limits.testKeyMonthlyRecipients = 1_000_000;
        config.limits.workspaceMonthlyRecipients = 1_000_000;
      }
      options.overrides?.(config);
    },
  };
  let relay: Relay;
  try {
    relay = await startRelay(startOptions);
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const proxy = await startContractProxy(relay.httpUrl);
  let bootstrap = relay.bootstrap;
  if (!bootstrap) throw new Error('startTestRelay expects an empty data directory (use the relay directly to restart)');

  const t: TestRelay = {
    relay,
    url: proxy.url,
    directUrl: relay.httpUrl,
    apiKey: bootstrap.apiKey,
    adminToken: relay.adminToken,
    workspaceId: bootstrap.workspaceId,
    projectId: bootstrap.projectId,
    domain: bootstrap.domain,
    dataDir,
    violations: proxy.violations,
    api: (method, p, o = {}) => call(proxy.url, method, p, { token: o.key === undefined ? bootstrap!.apiKey : o.key, body: o.body, headers: o.headers }),
    admin: (method, p, body) => call(proxy.url, method, p, { token: relay.adminToken, body }),
    send: (fields = {}, o = {}) =>
      t.api('POST', '/v1/emails', {
        key: o.key,
        body: { from: `Raven Test <sender@${bootstrap!.domain}>`, to: `user@${bootstrap!.domain}`, subject: 'Hello', text: 'Hi there', ...fields },
        headers: o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : undefined,
      }),
    async waitForFinal(emailId, o = {}) {
      let deadline = Date.now() + (o.timeoutMs ?? 15_000);
      for (;;) {
        const res: CallResult = await t.api("GET", `/v1/emails/${emailId}`, { key: o.key });
        assert.equal(res.status, 200, res.text);
        const pending = res.body.recipients.some((r: any) => r.status === 'queued' || r.status === 'delivery_delayed');
        if (!pending && res.body.status !== 'queued') return res.body;
        deadline += await threadBootMs();
        if (Date.now() > deadline) throw new Error(`email ${emailId} still pending: ${res.text}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop() {
      await proxy.close();
      await relay.stop();
      // The database goes with the data directory: a test that keeps one (to inspect it, to
      // restart on it) keeps both.
      if (!options.keepDataDir && !options.dataDir) {
        await rm(dataDir, { recursive: true, force: true });
        await database?.drop();
      }
      assert.deepEqual(proxy.violations, [], 'responses must conform to openapi.yaml');
    },
  };
  return t;
}

/**
 * Creates a project (with a verified domain and a key) in a workspace through the admin API: of a
 * test relay, or anything with its admin call and workspace (a cluster's relay, for instance).
 */
export async function createProjectWithKey(
  t: Pick<TestRelay, 'admin' | 'workspaceId'>,
  options: { workspaceId?: string; environment?: 'development' | 'production'; domain?: string; permission?: 'email:send' | 'email:read' } = {},
) {
  const workspaceId = options.workspaceId ?? t.workspaceId;
  const project = await t.admin('POST', `/admin/v1/workspaces/${workspaceId}/projects`, {
    name: 'p',
    environment: options.environment ?? 'development',
  });
  assert.equal(project.status, 201, project.text);
  const domainName = options.domain ?? `d${Math.random().toString(36).slice(2, 8)}.test`;
  const domain = await t.admin('POST', `/admin/v1/projects/${project.body.id}/domains`, { name: domainName });
  assert.equal(domain.status, 201, domain.text);
  const verified = await t.admin('POST', `/admin/v1/domains/${domain.body.id}/verify`, { force: true });
  assert.equal(verified.status, 200, verified.text);
  const key = await t.admin('POST', `/admin/v1/projects/${project.body.id}/keys`, { name: 'k', permission: options.permission ?? 'email:send' });
  assert.equal(key.status, 201, key.text);
  return { projectId: project.body.id as string, domain: domainName, domainId: domain.body.id as string, key: key.body.key as string, keyId: key.body.id as string };
}
