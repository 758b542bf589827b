// Sender domains of a project: connecting one creates its DKIM key pair (the private key stored
// sealed) and the DNS records the customer publishes; verifying checks those records over DNS
// (or, with force, marks them verified for development).
import type { DnsRecord } from 'raven-email-sdk';
import { utcMonth } from '../clock.js';
import { ApiError, validationError } from '../errors.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import * as domains from '../storage/domains.js';
import type { DomainRow } from '../storage/domains.js';
import { requireString, type AdminBody } from './admin-body.js';
import { findProject } from './projects.js';

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

export async function connectDomain(s: RelayServices, projectId: string, body: AdminBody, options: { verified?: boolean } = {}) {
  await findProject(s, projectId);
  const name = requireString(body, 'name', 253).toLowerCase().replace(/\.$/, '');
  if (!DOMAIN_NAME.test(name)) throw validationError([{ field: 'name', message: 'must be a domain name' }]);
  const alreadyConnected = () => validationError([{ field: 'name', message: 'is already connected to this project' }]);
  // Checked first only to spare the key generation; the insert is what decides.
  if (await domains.isDomainConnected(s.db, projectId, name)) throw alreadyConnected();
  const selector = `raven${utcMonth(s.clock.nowMs()).replace('-', '')}`;
  const dkim = s.dkimKeyPair();
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

/** The relay's public host name: the MX and the SPF `a:` target of every domain's records. */
export function mxHostFor(s: RelayServices): string {
  if (s.config.publicHostname) return s.config.publicHostname;
  const host = s.config.smtpHost;
  return host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
}

export async function listDomains(s: RelayServices, projectId: string) {
  await findProject(s, projectId);
  return { domains: (await domains.listDomains(s.db, projectId)).map(domainView) };
}

/** `GET /v1/domains`: the key's own project's domains by name, so a client can check a sender before sending. */
export async function senderDomainsOfProject(s: RelayServices, projectId: string) {
  const rows = await domains.listDomains(s.db, projectId);
  const byName = rows.map((d) => ({ name: d.name, status: d.status })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { domains: byName };
}

export async function verifyDomain(
  s: RelayServices,
  domainId: string,
  body: AdminBody,
  checkRecords: (records: DnsRecord[]) => Promise<DnsRecord[]>,
) {
  const row = await domains.getDomain(s.db, domainId);
  if (!row) throw new ApiError('not_found', `No domain ${domainId}.`);
  if (body.force !== undefined && typeof body.force !== 'boolean') throw validationError([{ field: 'force', message: 'must be a boolean' }]);
  let records = JSON.parse(row.records_json) as DnsRecord[];
  let verified: boolean;
  if (body.force === true) {
    records = records.map(({ problem: _problem, ...r }) => ({ ...r, status: 'verified' as const }));
    verified = true;
  } else {
    records = await checkRecords(records);
    verified = records.every((r) => !r.required || r.status === 'verified');
  }
  const now = s.clock.iso();
  await s.db.write((tx) => domains.recordDomainCheck(tx, domainId, JSON.stringify(records), verified, now));
  return domainView((await domains.getDomain(s.db, domainId))!);
}
