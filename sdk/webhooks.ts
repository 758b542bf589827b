/**
 * Webhook signatures (CONTRACT section 5): `Service-Signature: v1=<hex>` where hex is
 * HMAC-SHA256(secret as UTF-8 bytes, `<Service-Timestamp>.<raw body bytes>`).
 * node:crypto only, so receivers can use it without pulling in the HTTP client.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { RavenError } from './core/errors.js';
import type { WebhookEvent } from './types.js';

export const TIMESTAMP_HEADER = 'Service-Timestamp';
export const SIGNATURE_HEADER = 'Service-Signature';
export const EVENT_ID_HEADER = 'Service-Event-Id';
/** Five minutes either way, as the specification requires. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  | 'missing_header'
  | 'bad_format'
  | 'bad_signature'
  | 'timestamp_too_old'
  | 'timestamp_too_new';

export class WebhookVerificationError extends RavenError {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Raw request bytes, before any JSON parsing (a string is taken as its UTF-8 bytes). */
export type WebhookPayload = string | Buffer | Uint8Array;

/** Incoming request headers: Node's `req.headers`, a plain object, or a fetch `Headers`. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | Headers;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the timestamp and `now`, either way. @default 300 */
  toleranceSeconds?: number;
  /** The receiver's clock, in unix seconds. @default the current time */
  now?: number;
}

export interface SignWebhookOptions {
  /** Unix seconds to sign with. @default the current time */
  timestamp?: number;
}

export interface SignedWebhook {
  timestamp: string;
  /** `v1=<64 lowercase hex>`, one comma-separated entry per secret */
  signature: string;
  headers: { 'Service-Timestamp': string; 'Service-Signature': string };
}

/** The `v1=<hex>` value for one payload; exported for tools that build headers themselves. */
export function computeSignature(rawBody: WebhookPayload, secret: string, timestamp: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.from(`${timestamp}.`, 'utf8'))
    .update(toBytes(rawBody))
    .digest('hex');
}

/**
 * Signs a payload the way the service does (for tests and `ravenctl listen`). Several secrets (a
 * rotation's new one first, then the old one) give one comma-separated `v1=` entry each.
 */
export function signWebhook(rawBody: WebhookPayload, secret: string | readonly string[], opts: SignWebhookOptions = {}): SignedWebhook {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new RavenError('webhook secret must be a non-empty string');
  secrets.forEach(assertSecret);
  const seconds = opts.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new RavenError('signWebhook: timestamp must be a non-negative integer of unix seconds');
  }
  const timestamp = String(seconds);
  const signature = secrets.map((key) => `v1=${computeSignature(rawBody, key, timestamp)}`).join(',');
  return { timestamp, signature, headers: { 'Service-Timestamp': timestamp, 'Service-Signature': signature } };
}

/**
 * Checks a webhook request and returns its parsed body. Pass the raw body bytes exactly as
 * received. Throws WebhookVerificationError with a `reason` when the request is not authentic
 * (any one `v1=` entry of the signature header may match any one of the secrets given: during a
 * rotation, pass the new secret and the old one) or its timestamp is more than
 * `toleranceSeconds` away from `now`, in the past or the future.
 */
export function verifyWebhook(
  rawBody: WebhookPayload,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  opts: VerifyWebhookOptions = {},
): WebhookEvent {
  // Several secrets: during a rotation a receiver may hold the new one and the old one.
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new RavenError('webhook secret must be a non-empty string');
  secrets.forEach(assertSecret);
  const timestamp = readHeader(headers, TIMESTAMP_HEADER);
  const signatureHeader = readHeader(headers, SIGNATURE_HEADER);
  if (timestamp === undefined) fail('missing_header', `missing ${TIMESTAMP_HEADER} header`);
  if (signatureHeader === undefined) fail('missing_header', `missing ${SIGNATURE_HEADER} header`);
  if (!/^\d{1,15}$/.test(timestamp)) fail('bad_format', `${TIMESTAMP_HEADER} must be unix seconds (digits only)`);

  const candidates = signatureHeader
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('v1='))
    .map((entry) => entry.slice(3))
    .filter((hex) => /^[0-9a-f]{64}$/.test(hex));
  if (candidates.length === 0) {
    fail('bad_format', `${SIGNATURE_HEADER} must hold at least one v1=<64 lowercase hex> entry`);
  }

  // Compare every candidate with every secret, without stopping at the first match, in constant time each.
  let matched = false;
  for (const key of secrets) {
    const expected = Buffer.from(computeSignature(rawBody, key, timestamp), 'hex');
    for (const hex of candidates) {
      if (timingSafeEqual(expected, Buffer.from(hex, 'hex'))) matched = true;
    }
  }
  if (!matched) fail('bad_signature', 'no signature matches the payload and secret');

  // Checked after the signature, so a timestamp error means an authentic but stale (or replayed) request.
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const age = now - Number(timestamp);
  if (age > tolerance) fail('timestamp_too_old', `timestamp is ${age} s old; tolerance is ${tolerance} s`);
  if (-age > tolerance) fail('timestamp_too_new', `timestamp is ${-age} s in the future; tolerance is ${tolerance} s`);

  try {
    return JSON.parse(Buffer.from(toBytes(rawBody)).toString('utf8')) as WebhookEvent;
  } catch {
    return fail('bad_format', 'the signed body is not valid JSON');
  }
}

function fail(reason: WebhookVerificationReason, message: string): never {
  throw new WebhookVerificationError(reason, message);
}

function assertSecret(secret: string): void {
  if (typeof secret !== 'string' || secret === '') throw new RavenError('webhook secret must be a non-empty string');
}

function toBytes(body: WebhookPayload): Uint8Array {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  throw new RavenError('webhook body must be a string, Buffer or Uint8Array (the raw bytes, before JSON parsing)');
}

/** One header value, case-insensitively; repeated signature headers are joined as one comma list. */
function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === 'function') {
    value = (headers as Headers).get(name);
  } else {
    const wanted = name.toLowerCase();
    for (const [key, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (key.toLowerCase() === wanted && v !== undefined) value = v;
    }
  }
  if (Array.isArray(value)) value = value.join(',');
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** The `webhooks` namespace of a client: the same functions as verifyWebhook / signWebhook. */
export class Webhooks {
  verify(rawBody: WebhookPayload, headers: WebhookHeaders, secret: string | readonly string[], opts?: VerifyWebhookOptions): WebhookEvent {
    return verifyWebhook(rawBody, headers, secret, opts);
  }

  sign(rawBody: WebhookPayload, secret: string | readonly string[], opts?: SignWebhookOptions): SignedWebhook {
    return signWebhook(rawBody, secret, opts);
  }
}
