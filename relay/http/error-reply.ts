// The one place an error becomes an answer: ApiError carries its catalogue status (relay/errors.ts);
// busy or failing storage is a temporary 503; anything else is a bug, answered 500 without internals.
// Both an HTTP response and a refused WebSocket upgrade are written from the same Reply; a refused
// SMTP submission answers the same error as an SMTP reply (smtpRefusal).
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, ERROR_CATALOGUE, type ErrorCode } from '../errors.js';
import { isStorageFault } from '../storage/db.js';
import { ClientAbortedError, type Reply } from './context.js';

/** The ApiError an error is answered as. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ClientAbortedError) return new ApiError('invalid_request', error.message);
  // Busy, full or failing storage (from the writer or a read) is temporary: 503, never 500.
  if (isStorageFault(error)) return new ApiError('service_unavailable', 'Storage is temporarily unavailable; retry after 1 second.', { retryAfter: 1 });
  return new ApiError('internal_error', 'An internal error occurred.');
}

export function errorReply(error: unknown): Reply {
  const apiError = asApiError(error);
  const body: Record<string, unknown> = { code: apiError.code, message: apiError.message };
  const headers: Record<string, string | number> = { ...apiError.extra.headers };
  if (apiError.extra.retryAfter !== undefined) {
    body.retry_after = apiError.extra.retryAfter;
    headers['Retry-After'] = apiError.extra.retryAfter;
  }
  if (apiError.code === 'validation_error') body.details = apiError.extra.details ?? [];
  return { status: apiError.status, body: { error: body }, headers };
}

/**
 * Writes a complete HTTP error response on a raw socket (one that was asking to upgrade, or one
 * node:http could not parse a request from), then closes it. `status` overrides the code's own
 * (node's parser errors: 408 for a request not received in time, 431 for oversized headers).
 */
export function refuseOnSocket(socket: Duplex, requestId: string, error: unknown, status?: number): void {
  const reply = errorReply(error);
  if (status !== undefined) reply.status = status;
  const body = JSON.stringify(reply.body);
  const headers: Record<string, string | number> = {
    'Request-Id': requestId,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
    ...reply.headers,
  };
  const head = [`HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  answerAndClose(socket, `${head}\r\n\r\n${body}`);
}

/** How long a last answer may take to leave before the socket is dropped regardless. */
const LAST_ANSWER_MS = 5_000;

/**
 * Writes a last answer on a raw socket and then closes it for good. end() alone only half-closes:
 * node:http keeps the socket (and its descriptor) until the client closes its side, which a
 * client that never reads never does; so destroy once the answer is flushed, or after a while.
 */
export function answerAndClose(socket: Duplex, answer: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(answer, () => socket.destroy());
  setTimeout(() => socket.destroy(), LAST_ANSWER_MS).unref();
}

/** A refusal as an SMTP reply (CONTRACT section 9): `<enhanced code> <API error code>: <message>`, on one line. */
export function smtpRefusal(error: unknown): { responseCode: number; code: ErrorCode; message: string } {
  const apiError = asApiError(error);
  const [code, enhanced] = ERROR_CATALOGUE[apiError.code].smtp.split(' ') as [string, string];
  const details = apiError.code === 'validation_error' ? (apiError.extra.details ?? []).map((d) => `${d.field}: ${d.message}`) : [];
  const text = [apiError.message, ...(details.length > 1 ? [details.join('; ')] : [])].join(' ');
  // Nothing a client sent may break the reply into lines of its own.
  return { responseCode: Number(code), code: apiError.code, message: `${enhanced} ${apiError.code}: ${text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')}` };
}
