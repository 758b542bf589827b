// The dashboard's operations on workspaces, projects, domains, keys and suppressions (the usage view is quota.ts).
import { generateKeyPairSync } from 'node:crypto';
import { utcMonth } from '../clock.js';
import { ApiError, validationError } from '../errors.js';
import { newId, newSecret } from '../ids.js';
import type { RelayServices } from '../services.js';
import { hashSecret } from '../secrets.js';
import { parseMailbox } from './send-request.js';
import * as domains from '../storage/domains.js';
import * as keys from '../storage/keys.js';
import * as suppressions from '../storage/suppressions.js';
import * as tenancy from '../storage/tenancy.js';
import type { DomainRow } from '../storage/domains.js';
import type { KeyRow } from '../storage/keys.js';
import type { WorkspaceRow } from '../storage/tenancy.js';

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
  await s.db.write((tx) => tenancy.insertWorkspace(tx, row));
  return workspaceView(row);
}

export async function listWorkspaces(s: RelayServices) {
  return { workspaces: (await tenancy.listWorkspaces(s.db)).map(workspaceView) };
}

export async function findWorkspace(s: RelayServices, id: string): Promise<WorkspaceRow> {
  const row = await tenancy.getWorkspace(s.db, id);
  if (!row) throw new ApiError('not_found', `No workspace ${id}.`);
  return row;
}

export async function activateWorkspace(s: RelayServices, id: string) {
  await findWorkspace(s, id);
  await s.db.write((tx) => tenancy.activateWorkspace(tx, id, s.clock.iso()));
  s.keys.clear();
  return workspaceView(await findWorkspace(s, id));
}

// ---- projects ----

export async function createProject(s: RelayServices, workspaceId: string, body: Body) {
  await findWorkspace(s, workspaceId);
  const name = requireString(body, 'name');
  const environment = requireOneOf(body, 'environment', ['development', 'production'] as const);
  const row: tenancy.ProjectRow = { id: newId('prj'), workspace_id: workspaceId, name, environment, created_at: s.clock.iso() };
  await s.db.write((tx) => tenancy.insertProject(tx, row));
  return row;
}

export async function listProjects(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  return { projects: await tenancy.listProjects(s.db, workspaceId) };
}

async function findProject(s: RelayServices, id: string): Promise<tenancy.ProjectRow> {
  const row = await tenancy.getProject(s.db, id);
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
  const alreadyConnected = () => validationError([{ field: 'name', message: 'is already connected to this project' }]);
  // Checked first only to spare the key generation; the insert is what decides.
  if (await domains.isDomainConnected(s.db, projectId, name)) throw alreadyConnected();
  const selector = `raven${utcMonth(s.clock.nowMs()).replace('-', '')}`;
  const dkim = newDkimKeys();
  const now = s.clock.iso();
  const records = dnsRecordsFor(name, selector, dkim.publicKey, mxHostFor(s));
  if (options.verified) for (const r of records) r.status = 'verified';
  const row: DomainRow = {
    id: newId('dom'),
    project_id: projectId,
    name,
    status: options.verified ? 'verified' : 'pending',
    dkim_selector: selector,
    dkim_public_key: dkim.publicKey,
    records_json: JSON.stringify(records),
    created_at: now,
    verified_at: options.verified ? now : null,
    last_checked_at: null,
  };
  if (!(await s.db.write((tx) => domains.insertDomain(tx, row, s.secrets.seal(dkim.privateKeyPem))))) throw alreadyConnected();
  return domainView(row);
}

function mxHostFor(s: RelayServices): string {
  if (s.config.publicHostname) return s.config.publicHostname;
  const host = s.config.smtpHost;
  return host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
}

export async function listDomains(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  return { domains: (await domains.listDomains(s.db, projectId)).map(domainView) };
}

export async function verifyDomain(
  s: RelayServices,
  domainId: string,
  body: Body,
  checkRecords: (records: DnsRecord[]) => Promise<DnsRecord[]>,
) {
  const row = await domains.getDomain(s.db, domainId);
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
  await s.db.write((tx) => domains.recordDomainCheck(tx, domainId, JSON.stringify(records), verified, now));
  return domainView((await domains.getDomain(s.db, domainId))!);
}

// ---- keys ----

export async function createKey(s: RelayServices, projectId: string, body: Body) {
  const project = await findProject(s, projectId);
  const name = requireString(body, 'name');
  const permission = requireOneOf(body, 'permission', ['email:send', 'email:read'] as const);
  const prefix = project.environment === 'production' ? 'rr_live_' : 'rr_test_';
  const key = newSecret(prefix, 24);
  const row: Omit<KeyRow, 'last_used_at'> = { id: newId('key'), project_id: projectId, name, prefix, permission, last4: key.slice(-4), created_at: s.clock.iso(), revoked_at: null };
  await s.db.write((tx) => keys.insertKey(tx, { ...row, secret_hash: hashSecret(key) }));
  return { id: row.id, key, prefix, name, permission, project_id: projectId, created_at: row.created_at };
}

export async function listKeys(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  return {
    keys: (await keys.listKeys(s.db, projectId)).map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      permission: k.permission,
      project_id: k.project_id,
      redacted: `${k.prefix}…${k.last4}`,
      created_at: k.created_at,
      revoked_at: k.revoked_at,
      last_used_at: k.last_used_at,
    })),
  };
}

export async function revokeKey(s: RelayServices, keyId: string): Promise<void> {
  const revoked = await s.db.write((tx) => keys.revokeKey(tx, keyId, s.clock.iso()));
  s.keys.clear();
  if (!revoked) throw new ApiError('not_found', `No key ${keyId}.`);
}

// ---- suppressions ----

export async function listSuppressions(s: RelayServices, workspaceId: string) {
  await findWorkspace(s, workspaceId);
  const rows = await suppressions.listSuppressions(s.db, workspaceId);
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
  await s.db.write((tx) => suppressions.suppress(tx, workspaceId, address, 'manual', now));
  const row = await suppressions.getSuppression(s.db, workspaceId, address);
  return { email: address, reason: row!.reason, created_at: row!.created_at };
}

export async function removeSuppression(s: RelayServices, workspaceId: string, email: string): Promise<void> {
  await findWorkspace(s, workspaceId);
  const removed = await s.db.write((tx) => suppressions.unsuppress(tx, workspaceId, email.trim().toLowerCase()));
  if (!removed) throw new ApiError('not_found', `${email} is not suppressed in this workspace.`);
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
  if (await tenancy.anyWorkspaceExists(s.db)) return undefined;
  const workspace = await createWorkspace(s, { name: 'Default workspace' });
  const project = await createProject(s, workspace.id, { name: 'Development', environment: 'development' });
  const domain = await connectDomain(s, project.id, { name: s.config.domain }, { verified: true });
  const key = await createKey(s, project.id, { name: 'bootstrap', permission: 'email:send' });
  return { workspaceId: workspace.id, projectId: project.id, domainId: domain.id, domain: domain.name, apiKey: key.key, keyId: key.id };
}
