// Checks a domain's published records over real DNS (node:dns), record by record, against the
// configured resolvers (dns.servers) or the system's.
import { Resolver } from 'node:dns/promises';
import type { DnsRecord } from 'raven-email-sdk';

export interface DnsChecker {
  (records: DnsRecord[]): Promise<DnsRecord[]>;
  /** Ends the queries in flight; their records come back `failed`. */
  cancel(): void;
}

export function createDnsChecker(servers?: string[]): DnsChecker {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers(servers);

  const txt = async (name: string): Promise<string[]> => {
    try {
      return (await resolver.resolveTxt(name)).map((parts) => parts.join(''));
    } catch {
      return [];
    }
  };

  const check = async (records: DnsRecord[]) =>
    Promise.all(
      records.map(async (record): Promise<DnsRecord> => {
        if (record.type === 'MX') {
          const found = await resolver.resolveMx(record.name).catch(() => []);
          const ok = found.some((mx) => mx.exchange.replace(/\.$/, '').toLowerCase() === record.value.toLowerCase());
          return { ...record, status: ok ? 'verified' : 'failed' };
        }
        if (record.type === 'CNAME') {
          const found = await resolver.resolveCname(record.name).catch(() => []);
          return { ...record, status: found.some((v) => v.toLowerCase() === record.value.toLowerCase()) ? 'verified' : 'failed' };
        }
        const values = await txt(record.name);
        if (record.purpose === 'mail_from_spf') {
          const spf = values.filter((v) => v.toLowerCase().startsWith('v=spf1'));
          // Two SPF records at one host make SPF fail permanently (RFC 7208 section 4.5).
          if (spf.length > 1) return { ...record, status: 'duplicate' };
          return { ...record, status: spf.length === 1 ? 'verified' : 'failed' };
        }
        if (record.purpose === 'dmarc') {
          // Recommended, not required (`required: false`): its status never decides verification.
          return { ...record, status: values.some((v) => v.toLowerCase().startsWith('v=dmarc1')) ? 'verified' : 'failed' };
        }
        const normalise = (v: string) => v.replace(/\s+/g, '');
        return { ...record, status: values.some((v) => normalise(v) === normalise(record.value)) ? 'verified' : 'failed' };
      }),
    );
  return Object.assign(check, { cancel: () => resolver.cancel() });
}
