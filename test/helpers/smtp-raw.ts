// A raw SMTP client over node:net for protocol-level tests: the test decides every byte sent and
// reads the server's replies one at a time, multi-line replies included.
import net from 'node:net';

/** Generous guard for a reply that should come promptly; a test never relies on its length. */
const REPLY_GUARD_MS = 20_000;

export interface RawSmtp {
  socket: net.Socket;
  /** The next complete reply (lines of a multi-line reply joined by \n). Rejects when the
   * connection closes first, or after a long guard. */
  reply(): Promise<string>;
  /** Writes bytes exactly as given (a string is sent as latin1, one byte per character). */
  write(data: string | Buffer): Promise<void>;
  /** Writes a line with CRLF and returns the reply to it. */
  command(line: string | Buffer): Promise<string>;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
  destroy(): void;
}

export async function openRawSmtp(port: number, host = '127.0.0.1'): Promise<RawSmtp> {
  const socket = net.connect(port, host);
  // Writes after the server closed fail with EPIPE/ECONNRESET; the tests look at `closed`.
  socket.on('error', () => undefined);
  const replies: string[] = [];
  const waiters: Array<{ resolve: (reply: string) => void; reject: (error: Error) => void }> = [];
  let pending = '';
  let lines: string[] = [];
  let closed = false;
  const closedPromise = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`connection closed before a reply (after: ${replies.join(' | ')})`));
      resolve();
    }),
  );

  socket.on('data', (chunk: Buffer) => {
    pending += chunk.toString('latin1');
    let end: number;
    while ((end = pending.indexOf('\r\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 2);
      lines.push(line);
      if (!/^\d{3}-/.test(line)) {
        const reply = lines.join('\n');
        lines = [];
        const waiter = waiters.shift();
        if (waiter) waiter.resolve(reply);
        else replies.push(reply);
      }
    }
  });

  const reply = (): Promise<string> => {
    const queued = replies.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (closed) return Promise.reject(new Error('connection closed before a reply'));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (r: string) => {
          clearTimeout(guard);
          resolve(r);
        },
        reject: (e: Error) => {
          clearTimeout(guard);
          reject(e);
        },
      };
      const guard = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no reply within ${REPLY_GUARD_MS} ms`));
      }, REPLY_GUARD_MS);
      waiters.push(waiter);
    });
  };
  const write = (data: string | Buffer) =>
    new Promise<void>((resolve) => {
      if (closed || socket.destroyed) return resolve();
      socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, () => resolve());
    });

  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    reply,
    write,
    async command(line) {
      await write(Buffer.concat([typeof line === 'string' ? Buffer.from(line, 'latin1') : line, Buffer.from('\r\n')]));
      return reply();
    },
    closed: closedPromise,
    isClosed: () => closed,
    destroy: () => socket.destroy(),
  };
}
