// A lean SMTP load generator for the sink section: raw sockets, many connections, PIPELINING.
// nodemailer's pool (8 connections, a round trip per command, its own MIME composition and
// streams per message) used more CPU than the bare smtp-server it measured and capped it: the
// ceiling showed the client, not the servers. Here the messages are composed before the clock
// starts (nodemailer's MailComposer, so the bytes are the ones nodemailer sends), and each message
// costs two round trips: MAIL, every RCPT and DATA in one write (RFC 2920), then the body and its
// final dot. Every target of the section gets the same load.
import net from 'node:net';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';

export interface BlastMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface BlastResult {
  perSec: number;
  p50: number;
  p99: number;
  failed: number;
  wallMs: number;
}

/** The message's bytes as nodemailer sends them, dot-stuffed and ended by the final dot. */
async function dataOf(message: BlastMessage): Promise<Buffer> {
  const raw = await new MailComposer({ ...message }).compile().build();
  const stuffed = raw.toString('binary').replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
  return Buffer.from(`${stuffed}${stuffed.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'binary');
}

const bare = (address: string) => /<([^>]*)>/.exec(address)?.[1] ?? address;

/** One SMTP reply's code per call, in order (multi-line replies read whole). */
class Replies {
  private buffer = '';
  private readonly codes: number[] = [];
  private readonly waiting: ((code: number) => void)[] = [];

  constructor(socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\r\n')) >= 0) {
        const line = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        if (line[3] === '-') continue;
        const code = Number(line.slice(0, 3));
        const next = this.waiting.shift();
        if (next) next(code);
        else this.codes.push(code);
      }
    });
    const fail = () => {
      for (const next of this.waiting.splice(0)) next(0);
    };
    socket.on('close', fail);
    socket.on('error', fail);
  }

  next(): Promise<number> {
    const code = this.codes.shift();
    if (code !== undefined) return Promise.resolve(code);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

export interface BlastLoad {
  data: Buffer[];
  envelopes: Buffer[];
  recipients: number[];
}

/** The messages' bytes, composed once (before any clock starts; a load can be sent again). */
export async function composeBlast(messages: readonly BlastMessage[]): Promise<BlastLoad> {
  return {
    data: await Promise.all(messages.map(dataOf)),
    envelopes: messages.map((m) => Buffer.from(`MAIL FROM:<${bare(m.from)}>\r\n${m.to.map((t) => `RCPT TO:<${bare(t)}>\r\n`).join('')}DATA\r\n`)),
    recipients: messages.map((m) => m.to.length),
  };
}

/**
 * Sends the load over `connections` connections to 127.0.0.1:port, each connection taking the
 * next message as soon as its previous one is answered. A message counts as sent on its 250.
 */
export async function smtpBlast(port: number, load: BlastLoad, connections: number): Promise<BlastResult> {
  const { data, envelopes } = load;
  const n = data.length;
  let next = 0;
  let failed = 0;
  const latencies: number[] = [];

  async function connection(): Promise<void> {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const replies = new Replies(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    if ((await replies.next()) !== 220) throw new Error('no greeting');
    socket.write('EHLO blast.example.test\r\n');
    if ((await replies.next()) !== 250) throw new Error('EHLO refused');
    while (next < n) {
      const i = next++;
      const recipients = load.recipients[i]!;
      const t0 = performance.now();
      socket.write(envelopes[i]!);
      let accepted = true;
      for (let r = 0; r < recipients + 1; r++) if ((await replies.next()) !== 250) accepted = false;
      const dataReply = await replies.next();
      if (dataReply !== 354) {
        failed++;
        socket.write('RSET\r\n');
        await replies.next();
        continue;
      }
      socket.write(data[i]!);
      if ((await replies.next()) !== 250 || !accepted) failed++;
      latencies.push(performance.now() - t0);
    }
    socket.write('QUIT\r\n');
    await replies.next();
    socket.destroy();
  }

  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, connection));
  const wallMs = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN);
  return { perSec: (n - failed) / (wallMs / 1000), p50: at(50), p99: at(99), failed, wallMs };
}
