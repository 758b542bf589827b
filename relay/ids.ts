// Public ids: a prefix and 26 characters, time-ordered (ULID layout: 10 chars of milliseconds,
// 16 of randomness) so ids sort roughly by creation and leak nothing else.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

export type IdPrefix = 'em' | 'evt' | 'key' | 'dom' | 'prj' | 'ws' | 'whk' | 'msg' | 'req';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

// Each randomBytes call has a fixed cost (a buffer, a call into OpenSSL) and an admission makes three
// ids: draw them from a pool refilled 4 KiB at a time, each byte used once.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function encodeRandom(length: number): string {
  if (poolOffset + length > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset; i < poolOffset + length; i++) out += ALPHABET[pool[i]! & 31];
  poolOffset += length;
  return out;
}

export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${encodeTime(nowMs)}${encodeRandom(16)}`;
}

/** A high-entropy secret (API keys, webhook secrets, admin tokens). */
export function newSecret(prefix: string, bytes = 24): string {
  return prefix + randomBytes(bytes).toString('base64url');
}
