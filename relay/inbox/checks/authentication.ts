// Authentication of a captured message as a receiver would judge it: each DKIM signature, SPF and
// DMARC, by mailauth (the nodemailer authors' verifier). Local development has no public DNS for
// the relay's domains, so the lookups ask the relay's own records first (the DKIM key, SPF and
// DMARC records it gave every connected domain) and the configured or system resolver after.
import { Resolver } from 'node:dns/promises';
import type { DnsRecord } from 'raven-email-sdk';
import type { RelayServices } from '../../services.js';
import { parseHeaders } from '../../mail/headers.js';
import { recordsOfDomainsNamed } from '../../storage/domains.js';
import { mxHostFor } from '../../domain/sending-domains.js';

export interface DkimCheck {
  domain: string;
  selector: string | null;
  result: string;
  /** Why it did not pass (mailauth's comment), or null. */
  reason: string | null;
}

export interface AuthenticationChecks {
  dkim: DkimCheck[];
  spf: { domain: string | null; result: string; reason: string | null };
  dmarc: { domain: string | null; result: string; policy: string | null; reason: string | null };
}

/** A lookup that does not answer soon is a temporary error, never a check that hangs. */
const DNS_TIMEOUT_MS = 2_000;

type Lookup = (name: string, rrtype: string) => Promise<string[] | string[][]>;

function notFound(name: string, rrtype: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no ${rrtype} record at ${name}`), { code: 'ENOTFOUND' });
}

/** The names a record name may belong to: `s._domainkey.example.com` -> every parent domain. */
function parentNames(name: string): string[] {
  const labels = name.split('.');
  return labels.map((_, i) => labels.slice(i).join('.')).filter((n) => n.includes('.'));
}

/** The address the relay's own host name answers with: what a receiver would see it connect from. */
function relayAddress(host: string): { ip: string; family: 'A' | 'AAAA' } {
  return host.includes(':') ? { ip: host, family: 'AAAA' } : /^[\d.]+$/.test(host) && host !== '0.0.0.0' ? { ip: host, family: 'A' } : { ip: '127.0.0.1', family: 'A' };
}

function createLookup(services: RelayServices, projectId: string | null, relayHost: string, relayIp: string): Lookup {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  if (services.config.dns.servers.length > 0) resolver.setServers(services.config.dns.servers);
  return async (rawName, rrtype) => {
    const name = rawName.toLowerCase().replace(/\.$/, '');
    if (rrtype === 'TXT') {
      const rows = await recordsOfDomainsNamed(services.db, parentNames(name));
      // The message's own project first: two projects may connect one domain with the same selector.
      const ordered = [...rows.filter((r) => r.project_id === projectId), ...rows.filter((r) => r.project_id !== projectId)];
      for (const row of ordered) {
        const match = (JSON.parse(row.records_json) as DnsRecord[]).filter((r) => r.type === 'TXT' && r.name === name);
        if (match.length > 0) return match.map((r) => [r.value]);
      }
    }
    if ((rrtype === 'A' || rrtype === 'AAAA') && name === relayHost) {
      if ((rrtype === 'A') === !relayIp.includes(':')) return [relayIp];
      throw notFound(name, rrtype);
    }
    return (await resolver.resolve(name, rrtype)) as string[] | string[][];
  };
}

/** The tags RFC 6376 section 3.5 requires of every DKIM-Signature. */
const REQUIRED_TAGS = ['v', 'a', 'b', 'bh', 'd', 'h', 's'];

/**
 * DKIM-Signature headers missing required tags: mailauth passes over them as if the message were
 * unsigned, but a receiver sees a broken signature (permerror), and so should the developer.
 */
function malformedSignatures(raw: Buffer): DkimCheck[] {
  return parseHeaders(raw, false)
    .filter(([name]) => name.toLowerCase() === 'dkim-signature')
    .flatMap(([, value]) => {
      const tags = new Map(
        value
          .replace(/\s+/g, '')
          .split(';')
          .filter((kv) => kv.includes('='))
          .map((kv) => [kv.slice(0, kv.indexOf('=')).toLowerCase(), kv.slice(kv.indexOf('=') + 1)] as const),
      );
      const missing = REQUIRED_TAGS.filter((tag) => !tags.get(tag));
      if (missing.length === 0) return [];
      return [{ domain: tags.get('d') ?? '', selector: tags.get('s') ?? null, result: 'permerror', reason: `malformed DKIM-Signature: no ${missing.join(', ')} tag${missing.length > 1 ? 's' : ''}` }];
    });
}

export async function checkAuthentication(
  services: RelayServices,
  message: { raw: Buffer; envelope_from: string; email_id: string | null; project_id: string | null },
): Promise<AuthenticationChecks> {
  const host = mxHostFor(services).toLowerCase();
  const { ip } = relayAddress(host === 'localhost' ? '127.0.0.1' : host);
  // Loaded on first use: mailauth is most of what loading the relay would cost (0.5 CPU s).
  const { authenticate } = await import('mailauth');
  const result = await authenticate(message.raw, {
    // Mail the relay delivered came from the relay itself; the sink keeps no client address for the rest.
    ip: message.email_id !== null ? ip : undefined,
    helo: host,
    sender: message.envelope_from,
    mta: host,
    resolver: createLookup(services, message.project_id, host, ip),
    disableArc: true,
    disableBimi: true,
  } as Parameters<typeof authenticate>[1]);
  // mailauth reports an unsigned message as one `none` result without a domain: here, no signature.
  const dkim = (result.dkim?.results ?? []).filter((r: any) => r.signingDomain || r.status?.result !== 'none').map((r: any): DkimCheck => ({
    domain: r.signingDomain ?? '',
    selector: r.selector ?? null,
    result: r.status?.result ?? 'neutral',
    reason: r.status?.result === 'pass' ? null : (r.status?.comment ?? null),
  }));
  dkim.push(...malformedSignatures(message.raw));
  const spf: any = result.spf;
  const dmarc: any = result.dmarc;
  return {
    dkim,
    spf: spf
      ? { domain: spf.domain ?? null, result: spf.status?.result ?? 'none', reason: spf.status?.comment ?? null }
      : { domain: null, result: 'none', reason: 'the sink keeps no client address for mail it did not deliver itself' },
    dmarc: dmarc
      ? { domain: dmarc.domain ?? null, result: dmarc.status?.result ?? 'none', policy: dmarc.policy ?? dmarc.p ?? null, reason: dmarc.status?.comment ?? null }
      : { domain: null, result: 'none', policy: null, reason: (result as any).dmarcSkipReason ?? 'no From domain to evaluate' },
  };
}
