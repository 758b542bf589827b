// A tiny authoritative DNS server for tests, on 127.0.0.1 over UDP and TCP on one port: answers
// TXT, MX and CNAME questions from a table the test edits while it runs. Point a resolver at
// `address` (node:dns setServers, the relay's dns.servers). Hand-encoded (RFC 1035): a header, the
// question echoed, answers named by a pointer to it, TTL 0 so no resolver caches anything.
// A name missing from the table answers NXDOMAIN; a present name without that type, no answers.
import dgram from 'node:dgram';
import net from 'node:net';

export type DnsAnswer =
  | { type: 'TXT'; value: string | string[] }
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'CNAME'; target: string };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for dns.servers / setServers. */
  address: string;
  port: number;
  /** Replaces the answers at a name (an empty list: the name exists with no records). */
  set(name: string, answers: DnsAnswer[]): void;
  /** Removes a name: it answers NXDOMAIN. */
  remove(name: string): void;
  /** Questions answered so far, `TYPE name`. */
  questions: string[];
  close(): Promise<void>;
}

const TYPE_CODES = { TXT: 16, MX: 15, CNAME: 5 } as const;
const TYPE_NAMES: Record<number, string> = { 16: 'TXT', 15: 'MX', 5: 'CNAME', 1: 'A', 28: 'AAAA', 41: 'OPT' };
const OPT = 41;
const NXDOMAIN = 3;
const FORMERR = 1;
const UDP_DEFAULT_LIMIT = 512;

interface Question {
  id: number;
  recursionDesired: boolean;
  name: string;
  type: number;
  /** The question section as sent (echoed back, and the target of answer name pointers). */
  raw: Buffer;
  /** The EDNS0 UDP payload size the client advertised, else 512. */
  udpLimit: number;
}

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([Buffer.byteLength(l)]), Buffer.from(l)])), Buffer.from([0])]);
}

/** Reads an uncompressed name (questions never compress); returns it and the offset after it. */
function readName(msg: Buffer, offset: number): [string, number] {
  const labels: string[] = [];
  for (;;) {
    const length = msg[offset];
    if (length === undefined || length > 63) throw new Error('bad name');
    offset += 1;
    if (length === 0) return [labels.join('.'), offset];
    labels.push(msg.subarray(offset, offset + length).toString('latin1'));
    offset += length;
  }
}

function parseQuestion(msg: Buffer): Question {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) throw new Error('expected one question');
  const [name, end] = readName(msg, 12);
  const type = msg.readUInt16BE(end);
  const questionEnd = end + 4;
  let udpLimit = UDP_DEFAULT_LIMIT;
  if (msg.readUInt16BE(10) > 0 && msg[questionEnd] === 0 && msg.readUInt16BE(questionEnd + 1) === OPT) {
    udpLimit = Math.max(UDP_DEFAULT_LIMIT, msg.readUInt16BE(questionEnd + 3));
  }
  return {
    id: msg.readUInt16BE(0),
    recursionDesired: (msg.readUInt16BE(2) & 0x0100) !== 0,
    name: name.toLowerCase().replace(/\.$/, ''),
    type,
    raw: msg.subarray(12, questionEnd),
    udpLimit,
  };
}

function rdata(answer: DnsAnswer): Buffer {
  switch (answer.type) {
    case 'TXT': {
      // One TXT record is a list of strings of at most 255 bytes; a long value is split.
      const strings = typeof answer.value === 'string' ? (answer.value.match(/[\s\S]{1,255}/g) ?? ['']) : answer.value;
      return Buffer.concat(strings.map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])));
    }
    case 'MX': {
      const preference = Buffer.alloc(2);
      preference.writeUInt16BE(answer.priority);
      return Buffer.concat([preference, encodeName(answer.exchange)]);
    }
    case 'CNAME':
      return encodeName(answer.target);
  }
}

function resourceRecord(answer: DnsAnswer): Buffer {
  const data = rdata(answer);
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's name at offset 12
  head.writeUInt16BE(TYPE_CODES[answer.type], 2);
  head.writeUInt16BE(1, 4); // class IN
  head.writeUInt32BE(0, 6); // TTL 0: never cached
  head.writeUInt16BE(data.length, 10);
  return Buffer.concat([head, data]);
}

function header(q: Pick<Question, 'id' | 'recursionDesired'>, options: { rcode: number; answers: number; truncated?: boolean; questions: number }): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(q.id, 0);
  // QR (a response), AA (authoritative), RD echoed, RA, TC when truncated, the response code.
  h.writeUInt16BE(0x8000 | 0x0400 | (q.recursionDesired ? 0x0100 : 0) | 0x0080 | (options.truncated ? 0x0200 : 0) | options.rcode, 2);
  h.writeUInt16BE(options.questions, 4);
  h.writeUInt16BE(options.answers, 6);
  return h;
}

/** A UDP socket on a free port and the TCP server on the same number (another try when taken). */
async function bindBoth(tcp: net.Server): Promise<{ udp: dgram.Socket; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    const listening = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      tcp.once('error', onError);
      tcp.listen(port, '127.0.0.1', () => {
        tcp.removeListener('error', onError);
        resolve(true);
      });
    });
    if (listening) return { udp, port };
    udp.close();
    if (attempt === 5) throw new Error('no port free for both UDP and TCP');
  }
}

export async function startDnsServer(initial: Record<string, DnsAnswer[]> = {}): Promise<TestDnsServer> {
  const table = new Map<string, DnsAnswer[]>();
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
  for (const [name, answers] of Object.entries(initial)) table.set(key(name), answers);
  const questions: string[] = [];

  /** The response to one query; over UDP, a header with TC set when it does not fit. */
  function respond(msg: Buffer, udp: boolean): Buffer {
    let q: Question;
    try {
      q = parseQuestion(msg);
    } catch {
      const id = msg.length >= 2 ? msg.readUInt16BE(0) : 0;
      return header({ id, recursionDesired: false }, { rcode: FORMERR, answers: 0, questions: 0 });
    }
    questions.push(`${TYPE_NAMES[q.type] ?? q.type} ${q.name}`);
    const records = table.get(q.name);
    const answers = (records ?? []).filter((a) => TYPE_CODES[a.type] === q.type);
    const full = Buffer.concat([
      header(q, { rcode: records ? 0 : NXDOMAIN, answers: answers.length, questions: 1 }),
      q.raw,
      ...answers.map(resourceRecord),
    ]);
    if (udp && full.length > q.udpLimit) {
      return Buffer.concat([header(q, { rcode: 0, answers: 0, truncated: true, questions: 1 }), q.raw]);
    }
    return full;
  }

  // TCP on the same port, for answers too long for UDP: messages prefixed by a 2-byte length.
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + msg.length);
        const reply = respond(msg, false);
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([length, reply]));
      }
    });
  });
  const { udp, port } = await bindBoth(tcp);
  udp.on('message', (msg, peer) => udp.send(respond(msg, true), peer.port, peer.address));

  return {
    address: `127.0.0.1:${port}`,
    port,
    questions,
    set: (name, answers) => void table.set(key(name), answers),
    remove: (name) => void table.delete(key(name)),
    close: async () => {
      udp.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/** A record the relay asks a domain to publish (the API's DnsRecord, as far as DNS needs it). */
export interface RequestedRecord {
  type: string;
  name: string;
  value: string;
  priority?: number;
  purpose: string;
}

/**
 * Publishes a domain's requested records on the server, except the purposes in `skip`;
 * `extraSpf` adds a second SPF record at the MAIL FROM host (which must fail as `duplicate`).
 */
export function publishRecords(dns: TestDnsServer, records: RequestedRecord[], options: { skip?: string[]; extraSpf?: boolean } = {}): void {
  const byName = new Map<string, DnsAnswer[]>();
  for (const r of records) {
    if (options.skip?.includes(r.purpose)) continue;
    const answer: DnsAnswer = r.type === 'MX' ? { type: 'MX', exchange: r.value, priority: r.priority ?? 10 } : { type: 'TXT', value: r.value };
    byName.set(r.name, [...(byName.get(r.name) ?? []), answer]);
  }
  const spf = records.find((r) => r.purpose === 'mail_from_spf');
  if (options.extraSpf && spf) byName.get(spf.name)?.push({ type: 'TXT', value: 'v=spf1 include:other.example ~all' });
  for (const [name, answers] of byName) dns.set(name, answers);
}
