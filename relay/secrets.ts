// Secrets at rest: API keys are stored as SHA-256 digests (they are high-entropy, so a plain
// digest is enough) and compared in constant time; secrets the relay must read back (webhook
// signing secrets, DKIM private keys) are encrypted with AES-256-GCM under the relay's key.
import { createCipheriv, createDecipheriv, createHash, createPrivateKey, hash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

const MAX_OPENED_KEYS = 1_000;

// One-shot digests (crypto.hash): every API request hashes its key and compares digests, and a
// Hash object per digest cost about four times the digest itself (BENCHMARKS.md, issue 24).
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** A string's SHA-256 as bytes (through a binary string: one-shot, and cheaper than a Buffer output). */
const digestBytes = (s: string) => Buffer.from(hash('sha256', s, 'binary'), 'binary');

export function constantTimeEqual(a: string, b: string): boolean {
  // Compare digests so the lengths match and the time does not depend on where they differ.
  return timingSafeEqual(digestBytes(a), digestBytes(b)) && a.length === b.length;
}

export class SecretBox {
  private readonly key: Buffer;
  /** Private keys already opened and parsed, by their sealed form (a sealed key never changes). */
  private readonly openedKeys = new Map<string, KeyObject>();

  constructor(keyMaterial: string) {
    this.key = createHash('sha256').update(keyMaterial, 'utf8').digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unreadable sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** A sealed PEM private key, opened and parsed once (signing every message must not pay for both). */
  openPrivateKey(sealed: string): KeyObject {
    let key = this.openedKeys.get(sealed);
    if (!key) {
      if (this.openedKeys.size >= MAX_OPENED_KEYS) this.openedKeys.clear();
      key = createPrivateKey(this.open(sealed));
      this.openedKeys.set(sealed, key);
    }
    return key;
  }
}
