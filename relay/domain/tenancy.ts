// The dashboard's operations on workspaces, projects, domains, keys and suppressions.
import { generateKeyPairSync } from 'node:crypto';
import { utcMonth } from '../clock.js';
import { ApiError, validationError } from '../errors.js';
import { newId, newSecret } from '../ids.js';
import type { RelayServices } from '../services.js';
import { hashSecret } from '../secrets.js';
import { parseMailbox } from './send-request.js';

type Body = Record<string, unknown>;

function requireString(body: Body, field: string, max = 200): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max) {
    throw validationError([{ field, message: `is required: a string of 1 to ${max} characters` }]);
  }
  return value.trim();
}

function requireOneOf<T extends string>(body: Body, field: string, allowed: readonly T[]): T {
  const value = body[field];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw validationError([{ field, message: `must be one of ${allowed.join(', ')}` }]);
  }
  return value as T;
}

export function asBody(value: unknown): Body {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_request', 'The body must be a JSON object.');
  return value as Body;
}

// ---- workspaces ----

interface WorkspaceRow {
  id: string;
  name: string;
  activated_at: string | null;
  created_at: string;
}

const workspaceView = (w: WorkspaceRow) => ({
  id: w.id,
  name: w.name,
  activated: w.activated_at !== null,
  activated_at: w.activated_at,
  created_at: w.created_at,
});

export async function createWorkspace(s: RelayServices, body: Body) {
  const name = requireString(body, 'name');
  const row: WorkspaceRow = { id: newId('ws'), name, activated_at: null, created_at: s.clock.iso() };
  await s.db.write((tx) => tx.run('INSERT INTO workspaces (id, name, activated_at, created_at) VALUES (?, ?, ?, ?)', [row.id, row.name, null, row.created_at]));
  return workspaceView(row);
}

export async function listWorkspaces(s: RelayServices) {
  const rows = await s.db.all<WorkspaceRow>('SELECT * FROM workspaces ORDER BY created_at, id');
  return { workspaces: rows.map(workspaceView) };
}

async function findWorkspace(s: RelayServices, id: string): Promise<WorkspaceRow> {
  const row = await s.db.get<WorkspaceRow>('SELECT * FROM workspaces WHERE id = ?', [id]);
  if (!row) throw new ApiError('not_found', `No workspace ${id}.`);
  return row;
}

export async function activateWorkspace(s: RelayServices, id: string) {
  await findWorkspace(s, id);
  await s.db.write((tx) => tx.run('UPDATE workspaces SET activated_at = COALESCE(activated_at, ?) WHERE id = ?', [s.clock.iso(), id]));
  s.keys.clear();
  return workspaceView(await findWorkspace(s, id));
}

// ---- projects ----

interface ProjectRow {
  id: string;
  workspace_id: string;
  name: string;
  environment: 'development' | 'production';
  created_at: string;
}

export async function createProject(s: RelayServices, workspaceId: string, body: Body) {
  await findWorkspace(s, workspaceId);
  const name = requireString(body, 'name');
  const environment = requireOneOf(body, 'environment', ['development', 'production'] as const);
  const row: ProjectRow = { id: newId('prj'), workspace_id: workspaceId, name, environment, created_at: s.clock.iso() };
  await s.db.write((tx) =>
    tx.run('INSERT INTO projects (id, workspace_id, name, environment, created_at) VALUES (?, ?, ?, ?, ?)', [
      row.id, row.workspace_id, row.name, row.environment, row.created_at,
    ]),
  );
  return row;
}

export async function listProjects(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  return { projects: await s.db.all<ProjectRow>('SELECT * FROM projects WHERE workspace_id = ? ORDER BY created_at, id', [workspaceId]) };
}

async function findProject(s: RelayServices, id: string): Promise<ProjectRow> {
  const row = await s.db.get<ProjectRow>('SELECT * FROM projects WHERE id = ?', [id]);
  if (!row) throw new ApiError('not_found', `No project ${id}.`);
  return row;
}

// ---- domains ----

export interface DnsRecord {
  type: 'CNAME' | 'MX' | 'TXT';
  name: string;
  value: string;
  priority?: number;
  purpose: 'dkim' | 'mail_from_mx' | 'mail_from_spf' | 'dmarc';
  required: boolean;
  status?: 'pending' | 'verified' | 'failed' | 'duplicate';
}

interface DomainRow {
  id: string;
  project_id: string;
  name: string;
  status: 'pending' | 'verified';
  dkim_selector: string;
  dkim_public_key: string | null;
  records_json: string;
  created_at: string;
  verified_at: string | null;
  last_checked_at: string | null;
}

const domainView = (d: DomainRow) => ({
  id: d.id,
  project_id: d.project_id,
  name: d.name,
  status: d.status,
  records: JSON.parse(d.records_json) as DnsRecord[],
  created_at: d.created_at,
  verified_at: d.verified_at,
  last_checked_at: d.last_checked_at,
});

const DOMAIN_NAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

/** The records a customer publishes: DKIM, the MAIL FROM subdomain `raven` (MX and SPF), DMARC. */
export function dnsRecordsFor(domain: string, selector: string, publicKeyBase64: string, mxHost: string): DnsRecord[] {
  return [
    { type: 'TXT', name: `${selector}._domainkey.${domain}`, value: `v=DKIM1; k=rsa; p=${publicKeyBase64}`, purpose: 'dkim', required: true, status: 'pending' },
    { type: 'MX', name: `raven.${domain}`, value: mxHost, priority: 10, purpose: 'mail_from_mx', required: true, status: 'pending' },
    { type: 'TXT', name: `raven.${domain}`, value: `v=spf1 a:${mxHost} ~all`, purpose: 'mail_from_spf', required: true, status: 'pending' },
    { type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=none;`, purpose: 'dmarc', required: false, status: 'pending' },
  ];
}

function newDkimKeys(): { publicKey: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return { publicKey: der.toString('base64'), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

export async function connectDomain(s: RelayServices, projectId: string, body: Body, options: { verified?: boolean } = {}) {
  await findProject(s, projectId);
  const name = requireString(body, 'name', 253).toLowerCase().replace(/\.$/, '');
  if (!DOMAIN_NAME.test(name)) throw validationError([{ field: 'name', message: 'must be a domain name' }]);
  const existing = await s.db.get<{ id: string }>('SELECT id FROM domains WHERE project_id = ? AND name = ?', [projectId, name]);
  if (existing) throw validationError([{ field: 'name', message: 'is already connected to this project' }]);
  const selector = `raven${utcMonth(s.clock.nowMs()).replace('-', '')}`;
  const keys = newDkimKeys();
  const now = s.clock.iso();
  const records = dnsRecordsFor(name, selector, keys.publicKey, mxHostFor(s));
  if (options.verified) for (const r of records) r.status = 'verified';
  const row: DomainRow = {
    id: newId('dom'),
    project_id: projectId,
    name,
    status: options.verified ? 'verified' : 'pending',
    dkim_selector: selector,
    dkim_public_key: keys.publicKey,
    records_json: JSON.stringify(records),
    created_at: now,
    verified_at: options.verified ? now : null,
    last_checked_at: null,
  };
  await s.db.write((tx) =>
    tx.run(
      `INSERT INTO domains (id, project_id, name, status, dkim_selector, dkim_public_key, dkim_private_key, records_json, created_at, verified_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.project_id, row.name, row.status, selector, keys.publicKey, s.secrets.seal(keys.privateKeyPem), row.records_json, now, row.verified_at],
    ),
  );
  return domainView(row);
}

function mxHostFor(s: RelayServices): string {
  if (s.config.publicHostname) return s.config.publicHostname;
  const host = s.config.smtpHost;
  return host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
}

export async function listDomains(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  const rows = await s.db.all<DomainRow>('SELECT * FROM domains WHERE project_id = ? ORDER BY created_at, id', [projectId]);
  return { domains: rows.map(domainView) };
}

export async function verifyDomain(
  s: RelayServices,
  domainId: string,
  body: Body,
  checkRecords: (records: DnsRecord[]) => Promise<DnsRecord[]>,
) {
  const row = await s.db.get<DomainRow>('SELECT * FROM domains WHERE id = ?', [domainId]);
  if (!row) throw new ApiError('not_found', `No domain ${domainId}.`);
  if (body.force !== undefined && typeof body.force !== 'boolean') throw validationError([{ field: 'force', message: 'must be a boolean' }]);
  let records = JSON.parse(row.records_json) as DnsRecord[];
  let verified: boolean;
  if (body.force === true) {
    records = records.map((r) => ({ ...r, status: 'verified' as const }));
    verified = true;
  } else {
    records = await checkRecords(records);
    verified = records.every((r) => !r.required || r.status === 'verified');
  }
  const now = s.clock.iso();
  await s.db.write((tx) =>
    tx.run(
      `UPDATE domains SET records_json = ?, last_checked_at = ?,
         status = CASE WHEN ? THEN 'verified' ELSE status END,
         verified_at = CASE WHEN ? THEN COALESCE(verified_at, ?) ELSE verified_at END
       WHERE id = ?`,
      [JSON.stringify(records), now, verified ? 1 : 0, verified ? 1 : 0, now, domainId],
    ),
  );
  return domainView((await s.db.get<DomainRow>('SELECT * FROM domains WHERE id = ?', [domainId]))!);
}

// ---- keys ----

interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  prefix: 'rr_test_' | 'rr_live_';
  permission: 'email:send' | 'email:read';
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export async function createKey(s: RelayServices, projectId: string, body: Body) {
  const project = await findProject(s, projectId);
  const name = requireString(body, 'name');
  const permission = requireOneOf(body, 'permission', ['email:send', 'email:read'] as const);
  const prefix = project.environment === 'production' ? 'rr_live_' : 'rr_test_';
  const key = newSecret(prefix, 24);
  const row: KeyRow = { id: newId('key'), project_id: projectId, name, prefix, permission, last4: key.slice(-4), created_at: s.clock.iso(), revoked_at: null };
  await s.db.write((tx) =>
    tx.run(
      'INSERT INTO api_keys (id, project_id, name, prefix, permission, secret_hash, last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [row.id, projectId, name, prefix, permission, hashSecret(key), row.last4, row.created_at],
    ),
  );
  return { id: row.id, key, prefix, name, permission, project_id: projectId, created_at: row.created_at };
}

export async function listKeys(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  const rows = await s.db.all<KeyRow>('SELECT * FROM api_keys WHERE project_id = ? ORDER BY created_at, id', [projectId]);
  return {
    keys: rows.map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      permission: k.permission,
      project_id: k.project_id,
      redacted: `${k.prefix}…${k.last4}`,
      created_at: k.created_at,
      revoked_at: k.revoked_at,
    })),
  };
}

export async function revokeKey(s: RelayServices, keyId: string): Promise<void> {
  const result = await s.db.write((tx) =>
    tx.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [s.clock.iso(), keyId]),
  );
  s.keys.clear();
  if (result.changes === 0) throw new ApiError('not_found', `No key ${keyId}.`);
}

// ---- suppressions ----

export async function listSuppressions(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const rows = await s.db.all<{ address_lc: string; reason: string; created_at: string }>(
    'SELECT address_lc, reason, created_at FROM suppressions WHERE workspace_id = ? ORDER BY created_at DESC, address_lc',
    [workspaceId],
  );
  return { suppressions: rows.map((r) => ({ email: r.address_lc, reason: r.reason, created_at: r.created_at })) };
}

export async function addSuppression(s: RelayServices, workspaceId: string, body: Body) {
  await findWorkspace(s, workspaceId);
  const email = requireString(body, 'email', 254);
  const parsed = parseMailbox(email);
  if (typeof parsed === 'string' || parsed.name) throw validationError([{ field: 'email', message: 'must be a bare email address' }]);
  if (body.reason !== undefined && body.reason !== 'manual') throw validationError([{ field: 'reason', message: 'must be manual' }]);
  const now = s.clock.iso();
  const address = parsed.address.toLowerCase();
  await s.db.write((tx) =>
    tx.run(
      "INSERT INTO suppressions (workspace_id, address_lc, reason, created_at) VALUES (?, ?, 'manual', ?) ON CONFLICT DO NOTHING",
      [workspaceId, address, now],
    ),
  );
  const row = await s.db.get<{ reason: string; created_at: string }>(
    'SELECT reason, created_at FROM suppressions WHERE workspace_id = ? AND address_lc = ?',
    [workspaceId, address],
  );
  return { email: address, reason: row!.reason, created_at: row!.created_at };
}

export async function removeSuppression(s: RelayServices, workspaceId: string, email: string): Promise<void> {
  await findWorkspace(s, workspaceId);
  const result = await s.db.write((tx) =>
    tx.run('DELETE FROM suppressions WHERE workspace_id = ? AND address_lc = ?', [workspaceId, email.trim().toLowerCase()]),
  );
  if (result.changes === 0) throw new ApiError('not_found', `${email} is not suppressed in this workspace.`);
}

// ---- usage ----

export async function usage(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const month = utcMonth(s.clock.nowMs());
  const ws = await s.db.get<{ used: number }>('SELECT used FROM usage_counters WHERE scope = ? AND month = ?', [`ws:${workspaceId}`, month]);
  const keys = await s.db.all<{ id: string; prefix: string; used: number | null }>(
    `SELECT k.id, k.prefix, u.used FROM api_keys k JOIN projects p ON p.id = k.project_id
       LEFT JOIN usage_counters u ON u.scope = 'key:' || k.id AND u.month = ?
      WHERE p.workspace_id = ? ORDER BY k.created_at, k.id`,
    [month, workspaceId],
  );
  return {
    month,
    workspace: { used: ws?.used ?? 0, limit: s.config.limits.workspaceMonthlyRecipients },
    keys: keys.map((k) => ({
      id: k.id,
      used: k.used ?? 0,
      limit: k.prefix === 'rr_test_' ? s.config.limits.testKeyMonthlyRecipients : null,
    })),
  };
}

// ---- bootstrap ----

export interface Bootstrap {
  workspaceId: string;
  projectId: string;
  domainId: string;
  domain: string;
  apiKey: string;
  keyId: string;
}

/** An empty data directory gets a workspace, a development project, a verified domain and a key. */
export async function bootstrapIfEmpty(s: RelayServices): Promise<Bootstrap | undefined> {
  const any = await s.db.get<{ id: string }>('SELECT id FROM workspaces LIMIT 1');
  if (any) return undefined;
  const workspace = await createWorkspace(s, { name: 'Default workspace' });
  const project = await createProject(s, workspace.id, { name: 'Development', environment: 'development' });
  const domain = await connectDomain(s, project.id, { name: s.config.domain }, { verified: true });
  const key = await createKey(s, project.id, { name: 'bootstrap', permission: 'email:send' });
  return { workspaceId: workspace.id, projectId: project.id, domainId: domain.id, domain: domain.name, apiKey: key.key, keyId: key.id };
}
