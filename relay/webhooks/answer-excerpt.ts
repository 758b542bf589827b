// What an attempt keeps of a receiver's answer for the dashboard (issue 25): the first 1,024 bytes
// of the body as text. The rest is read and thrown away (up to a limit) so the connection can be
// reused; an answer past the limit closes it.
import { storableText } from '../domain/storable-text.js';

/** The bytes of an answer kept per attempt. */
export const ANSWER_EXCERPT_BYTES = 1024;
/** Bytes of an answer read at most; a longer one is cut (its connection is not reused). */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface AnswerExcerpt {
  /** The kept bytes as UTF-8 text: a character cut at the end is left out, bad bytes and NUL become U+FFFD. */
  text: string;
  /** Whether the answer had more bytes than the excerpt. */
  truncated: boolean;
}

/** The first bytes as text: complete characters only, each byte a decoder cannot read and each NUL shown as U+FFFD. */
export function excerptText(bytes: Uint8Array): string {
  // stream: true holds back a multi-byte character cut at the end instead of showing U+FFFD for it.
  return storableText(new TextDecoder('utf-8').decode(bytes, { stream: true }));
}

/** Reads an answer's body: its excerpt, the rest drained up to MAX_ANSWER_BYTES. A body cut short keeps what came. */
export async function readAnswerExcerpt(body: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<AnswerExcerpt> {
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let total = 0;
  try {
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (keptBytes < ANSWER_EXCERPT_BYTES) {
        const part = chunk.subarray(0, ANSWER_EXCERPT_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.byteLength;
      }
      if (total > MAX_ANSWER_BYTES) break; // leaving the loop destroys the body
    }
  } catch {
    body.destroy();
  }
  return { text: excerptText(Buffer.concat(kept)), truncated: total > keptBytes };
}
