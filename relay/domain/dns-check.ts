// Checks a domain's published records over real DNS (node:dns), record by record, against the
// configured resolvers (dns.servers) or the system's. A record that does not check out says why:
// nothing published at that name, other values found there, or no answer from the resolver.
import { Resolver } from 'node:dns/promises';
import type { DnsRecord } from 'raven-email-sdk';

export interface DnsChecker {
  (records: DnsRecord[]): Promise<DnsRecord[]>;
  /** Ends the queries in flight; their records come back `failed`. */
  cancel(): void;
}

/** What the resolver said about one name and type: the values, or the error code it gave. */
type Lookup = { values: string[] } | { error: string };

/** The resolver answered that there is no such record: the name or that type is not published. */
const NOT_PUBLISHED = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

function problemOf(record: DnsRecord, lookup: Lookup): string {
  if ('error' in lookup) {
    return NOT_PUBLISHED.has(lookup.error)
      ? `no ${record.type} record at ${record.name} (the resolver answered ${lookup.error}): publish it`
      : `the resolver gave no answer for ${record.type} ${record.name} (${lookup.error}): check dns.servers or retry`;
  }
  if (lookup.values.length === 0) return `no ${record.type} record at ${record.name}: publish it`;
  const shown = lookup.values.slice(0, 3).map((v) => JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v));
  return `${record.name} has ${shown.join(', ')}${lookup.values.length > 3 ? ', ...' : ''}, not the expected value`;
}

export function createDnsChecker(servers?: string[]): DnsChecker {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers(servers);

  const ask = async (query: () => Promise<string[]>): Promise<Lookup> => {
    try {
      return { values: await query() };
    } catch (error) {
      return { error: (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN' };
    }
  };
  const lookup = (record: DnsRecord): Promise<Lookup> => {
    if (record.type === 'MX') return ask(async () => (await resolver.resolveMx(record.name)).map((mx) => mx.exchange.replace(/\.$/, '')));
    if (record.type === 'CNAME') return ask(() => resolver.resolveCname(record.name));
    return ask(async () => (await resolver.resolveTxt(record.name)).map((parts) => parts.join('')));
  };

  const verdict = (record: DnsRecord, values: string[]): DnsRecord['status'] => {
    const lower = values.map((v) => v.toLowerCase());
    if (record.type === 'MX' || record.type === 'CNAME') return lower.includes(record.value.toLowerCase()) ? 'verified' : 'failed';
    if (record.purpose === 'mail_from_spf') {
      const spf = lower.filter((v) => v.startsWith('v=spf1'));
      // Two SPF records at one host make SPF fail permanently (RFC 7208 section 4.5).
      if (spf.length > 1) return 'duplicate';
      return spf.length === 1 ? 'verified' : 'failed';
    }
    // DMARC is recommended, not required (`required: false`): its status never decides verification.
    if (record.purpose === 'dmarc') return lower.some((v) => v.startsWith('v=dmarc1')) ? 'verified' : 'failed';
    const normalise = (v: string) => v.replace(/\s+/g, '');
    return values.some((v) => normalise(v) === normalise(record.value)) ? 'verified' : 'failed';
  };

  const check = async (records: DnsRecord[]) =>
    Promise.all(
      records.map(async (record): Promise<DnsRecord> => {
        const { problem: _previous, ...rest } = record;
        const found = await lookup(record);
        const status = 'values' in found ? verdict(record, found.values) : 'failed';
        if (status === 'verified') return { ...rest, status };
        const problem =
          status === 'duplicate'
            ? `${record.name} has more than one SPF record: keep only one (a second makes SPF fail)`
            : problemOf(record, found);
        return { ...rest, status, problem };
      }),
    );
  return Object.assign(check, { cancel: () => resolver.cancel() });
}
