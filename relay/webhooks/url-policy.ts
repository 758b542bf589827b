// Where the relay may send webhooks (CONTRACT section 5): `https` on port 443, no credentials in
// the URL, and a host that resolves only to public addresses, unless the relay allows local
// webhooks (development mode or --allow-local-webhooks): then `http` or `https` on any port, and
// loopback or private addresses too. Cloud metadata services (by address or by name) and multicast
// are refused always.
//
// The rules run twice: when an endpoint is created (checkWebhookUrl, which resolves the host), and
// on every send, against the addresses the connection actually uses (guarded-http.ts), so a
// DNS answer that changes after creation (DNS rebinding) cannot reach an internal service.
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';

export class UrlPolicyError extends Error {
  override name = 'UrlPolicyError';
  /** For network errors the dispatcher records: a stable code next to the message. */
  readonly code = 'ERR_WEBHOOK_URL_POLICY';
}

/** Longest endpoint URL accepted; longer ones are almost certainly a mistake. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** A creation request must not hang on a slow resolver. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** Instance metadata services: never a webhook target, whatever the configuration. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);
/** Their names (GCP, AWS), refused before any lookup: they resolve only inside the cloud. */
const METADATA_HOSTS = ['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal'];

function isMetadataHost(name: string): boolean {
  return METADATA_HOSTS.some((h) => name === h || name.endsWith(`.${h}`));
}

// ---- addresses ----

interface V4Range {
  base: number;
  bits: number;
  what: string;
  /** Allowed when local webhooks are allowed. */
  local: boolean;
}

function v4(text: string): number {
  return text.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const V4_SPECIAL: V4Range[] = [
  { base: v4('0.0.0.0'), bits: 8, what: 'an unspecified ("this network") address', local: true },
  { base: v4('10.0.0.0'), bits: 8, what: 'a private address', local: true },
  { base: v4('100.64.0.0'), bits: 10, what: 'a carrier-grade NAT address', local: true },
  { base: v4('127.0.0.0'), bits: 8, what: 'a loopback address', local: true },
  { base: v4('169.254.0.0'), bits: 16, what: 'a link-local address', local: true },
  { base: v4('172.16.0.0'), bits: 12, what: 'a private address', local: true },
  { base: v4('192.0.0.0'), bits: 24, what: 'an IETF protocol address', local: true },
  { base: v4('192.0.2.0'), bits: 24, what: 'a documentation address', local: true },
  { base: v4('192.88.99.0'), bits: 24, what: 'a 6to4 relay address', local: true },
  { base: v4('192.168.0.0'), bits: 16, what: 'a private address', local: true },
  { base: v4('198.18.0.0'), bits: 15, what: 'a benchmarking address', local: true },
  { base: v4('198.51.100.0'), bits: 24, what: 'a documentation address', local: true },
  { base: v4('203.0.113.0'), bits: 24, what: 'a documentation address', local: true },
  { base: v4('224.0.0.0'), bits: 4, what: 'a multicast address', local: false },
  { base: v4('240.0.0.0'), bits: 4, what: 'a reserved or broadcast address', local: false },
];

function v4Refusal(address: string, allowLocal: boolean): string | null {
  if (METADATA_ADDRESSES.has(address)) return 'a cloud metadata address';
  const n = v4(address);
  for (const range of V4_SPECIAL) {
    const size = 2 ** (32 - range.bits);
    if (Math.floor(n / size) === Math.floor(range.base / size)) {
      return allowLocal && range.local ? null : range.what;
    }
  }
  return null;
}

/** The 16 bytes of an IPv6 address (zone id dropped); undefined when it is not one. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (net.isIPv6(s) === false) return undefined;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const n = v4(quad[1]!);
    s = `${s.slice(0, quad.index)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return undefined;
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}

function bytesToV4(b: number[], at: number): string {
  return b.slice(at, at + 4).join('.');
}

function v6Refusal(bytes: number[], allowLocal: boolean): string | null {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((x) => x === 0);
  const word = (i: number) => bytes[i * 2]! * 256 + bytes[i * 2 + 1]!;
  const embedded = (at: number, kind: string): string | null => {
    const why = v4Refusal(bytesToV4(bytes, at), allowLocal);
    return why ? `${kind} form of ${why}` : null;
  };

  const words = Array.from({ length: 8 }, (_, i) => word(i).toString(16)).join(':');
  if (words === 'fd00:ec2:0:0:0:0:0:254') return 'a cloud metadata address';
  if (zeros(0, 16)) return allowLocal ? null : 'an unspecified address';
  if (zeros(0, 15) && bytes[15] === 1) return allowLocal ? null : 'a loopback address';
  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated): judged as the IPv4 address.
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return embedded(12, 'an IPv4-mapped');
  if (zeros(0, 8) && word(4) === 0xffff && word(5) === 0) return embedded(12, 'an IPv4-translated');
  // ::a.b.c.d (IPv4-compatible, deprecated).
  if (zeros(0, 12)) return allowLocal ? embedded(12, 'an IPv4-compatible') : 'an IPv4-compatible address';
  // 64:ff9b::/96 (NAT64): the embedded IPv4 address is where it goes.
  if (word(0) === 0x64 && word(1) === 0xff9b && zeros(4, 12)) return embedded(12, 'a NAT64');
  const first = word(0);
  if (first >= 0xff00) return 'a multicast address';
  if (allowLocal) return null;
  if (first === 0x2002) return embedded(2, 'a 6to4');
  if ((first & 0xfe00) === 0xfc00) return 'a unique-local (private) address';
  if ((first & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((first & 0xffc0) === 0xfec0) return 'a site-local address';
  if (first === 0x2001 && word(1) === 0x0db8) return 'a documentation address';
  if (first === 0x2001 && word(1) < 0x0200) return 'an IETF protocol (Teredo, ORCHID) address';
  if (first === 0x0064 && word(1) === 0xff9b) return 'a local-use NAT64 address';
  // Only global unicast (2000::/3) is public; everything else is reserved.
  if ((first & 0xe000) !== 0x2000) return 'a reserved address';
  return null;
}

/**
 * Why a webhook may not go to `address` (an IPv4 or IPv6 literal), or null when it may.
 * Non-literals are refused: callers pass what a resolver or a socket returned.
 */
export function addressRefusal(address: string, allowLocal: boolean): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  if (net.isIPv4(bare)) return v4Refusal(bare, allowLocal);
  const bytes = parseIPv6(bare);
  if (bytes) return v6Refusal(bytes, allowLocal);
  return 'not an IP address';
}

// ---- URLs ----

/**
 * The URL rules that need no network: scheme, port, credentials, and IP literals (which the
 * WHATWG parser has already normalised: 2130706433, 0x7f000001 and 127.1 all become 127.0.0.1).
 * Returns the parsed URL; throws UrlPolicyError with a sentence for the API's `details`.
 */
export function checkWebhookUrlSyntax(raw: string, allowLocal: boolean): URL {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new UrlPolicyError(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlPolicyError('must be an absolute URL');
  }
  if (allowLocal) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UrlPolicyError('must use https (or http, for local endpoints)');
  } else if (url.protocol !== 'https:') {
    throw new UrlPolicyError('must use https');
  }
  if (url.username !== '' || url.password !== '') throw new UrlPolicyError('must not contain credentials (user:password@)');
  // The parser drops the default port, so a non-empty port is anything but 443 for https.
  if (!allowLocal && url.port !== '') throw new UrlPolicyError('must use port 443');
  if (url.port === '0') throw new UrlPolicyError('must use a port from 1 to 65535');
  if (url.hash !== '') throw new UrlPolicyError('must not contain a fragment (#...)');
  const host = url.hostname;
  if (host === '') throw new UrlPolicyError('must name a host');
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    const why = addressRefusal(host, allowLocal);
    if (why) throw new UrlPolicyError(`must not point to ${why} (${host})`);
  } else {
    // The parser lower-cases names but keeps final dots, which name the same host (`localhost.`).
    const name = host.replace(/\.+$/, '');
    if (isMetadataHost(name)) throw new UrlPolicyError(`must not point to a cloud metadata service (${host})`);
    if (!allowLocal && (name === 'localhost' || name.endsWith('.localhost'))) {
      throw new UrlPolicyError(`must not point to a loopback address (${host})`);
    }
  }
  return url;
}

export type ResolveAll = (hostname: string) => Promise<string[]>;

const systemResolveAll: ResolveAll = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Creation-time check: the syntax rules, then every address the host resolves to. Without local
 * webhooks a host that does not resolve is refused too (it cannot be shown to be public).
 */
export async function checkWebhookUrl(raw: string, allowLocal: boolean, resolveAll: ResolveAll = systemResolveAll): Promise<URL> {
  const url = checkWebhookUrlSyntax(raw, allowLocal);
  const host = url.hostname;
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) return url;
  let addresses: string[];
  try {
    addresses = await withTimeout(resolveAll(host), RESOLVE_TIMEOUT_MS);
  } catch {
    if (allowLocal) return url; // development: the endpoint may appear later; send time checks again
    throw new UrlPolicyError(`host ${host} does not resolve`);
  }
  if (addresses.length === 0 && !allowLocal) throw new UrlPolicyError(`host ${host} does not resolve`);
  for (const address of addresses) {
    const why = addressRefusal(address, allowLocal);
    if (why) throw new UrlPolicyError(`must resolve only to public addresses: ${host} resolves to ${why} (${address})`);
  }
  return url;
}

// ---- send time ----

/** dns.lookup with `all: true`; tests give one that asks their own DNS server. */
export type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

const systemLookupAll: LookupAll = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A resolver for sockets that refuses the whole answer when any address is not allowed, so a
 * connection never even starts towards an internal address.
 */
export function createGuardedLookup(allowLocal: boolean, lookupAll: LookupAll = systemLookupAll): LookupFunction {
  return (hostname, options, callback) => {
    lookupAll(hostname, { ...options, all: true }, (err, list) => {
      if (err) {
        callback(err, '');
        return;
      }
      for (const a of list) {
        const why = addressRefusal(a.address, allowLocal);
        if (why) {
          callback(new UrlPolicyError(`refused: ${hostname} resolves to ${why} (${a.address})`), '');
          return;
        }
      }
      if (list.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '');
        return;
      }
      if (options.all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
