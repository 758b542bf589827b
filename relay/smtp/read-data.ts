// The DATA of one SMTP message, shared by the sink and the submission listener: read to its end
// whatever its size (the client is still sending), kept only up to the limit, so neither listener
// ever buffers more than `maxBytes` of a message it will refuse.
import type { SMTPServerDataStream } from 'smtp-server';

export type DataRead = { oversized: true; bytes: number } | { oversized: false; raw: Buffer; bytes: number };

/** Calls `done` once DATA ends. A client that goes away mid-DATA destroys the stream: no call. */
export function readData(stream: SMTPServerDataStream, maxBytes: number, done: (read: DataRead) => void): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let oversized = false;
  stream.on('error', () => undefined);
  stream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (oversized) return;
    if (stream.sizeExceeded || bytes > maxBytes) {
      oversized = true;
      chunks.length = 0;
      return;
    }
    chunks.push(chunk);
  });
  stream.once('end', () => {
    done(oversized || stream.sizeExceeded ? { oversized: true, bytes } : { oversized: false, raw: Buffer.concat(chunks, bytes), bytes });
  });
}
