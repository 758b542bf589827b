// One HTTP request written as bytes on a TCP connection of its own, read until the server closes
// it: for what a client library would not send (no Host, a bad header, a client that half-closes).
import net from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote, as latin1. */
  text: string;
  status: number;
  /** The status line and header lines, without the blank line. */
  headers: string;
  /** The body, de-chunked when it came in one chunk. */
  body: string;
}

/**
 * Writes `request` to 127.0.0.1:`port` and resolves with what came back once the connection closed.
 * halfClose: end() right after the request, so the client's FIN follows it (shutdown(SHUT_WR), as
 * `nc -q` and HTTP/1.0 scripts do); otherwise the client keeps its side open.
 */
export function exchange(port: number, request: string, options: { halfClose?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1').on('data', (d) => (text += d));
    socket.on('error', reject).on('close', () => {
      const end = text.indexOf('\r\n\r\n');
      let body = text.slice(end + 4);
      if (/\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(0, end))) body = body.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
      resolve({ text, status: Number(text.slice(9, 12)), headers: text.slice(0, end), body });
    });
    if (options.halfClose) socket.end(request);
    else socket.write(request);
  });
}

export interface KeepAliveConnection {
  /** Sends GET `path` and resolves with the response's head. */
  ask(path: string): Promise<string>;
  closed(): boolean;
  /** The client's own port: the server's peer port for this connection. */
  localPort: number;
  /** Closes the client's side only; resolves once the server has closed its side too. */
  halfClose(): Promise<void>;
  end(): void;
}

/** A raw HTTP/1.1 keep-alive connection to 127.0.0.1:`port`, one request at a time. */
export function keepAliveConnection(port: number): Promise<KeepAliveConnection> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let waiting: ((head: string) => void) | undefined;
    let closed = false;
    const socket = net.connect(port, '127.0.0.1');
    const ended = new Promise<void>((serverEnded) => socket.once('end', serverEnded));
    socket.once('connect', () =>
      resolve({
        ask(path) {
          return new Promise((answered, failed) => {
            if (closed) return failed(new Error('the server closed the connection'));
            waiting = answered;
            socket.once('close', () => failed(new Error('the server closed the connection without an answer')));
            socket.write(`GET ${path} HTTP/1.1\r\nHost: relay.test\r\n\r\n`);
          });
        },
        closed: () => closed,
        localPort: socket.localPort!,
        halfClose: () => {
          socket.end();
          return ended;
        },
        end: () => socket.destroy(),
      }),
    );
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.slice(0, end);
      const length = Number(/^content-length: *(\d+)/im.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      buffer = buffer.slice(end + 4 + length);
      const answered = waiting;
      waiting = undefined;
      answered?.(head);
    });
    socket.on('close', () => (closed = true));
    socket.on('error', reject);
  });
}
