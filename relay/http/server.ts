// node:http in front of the route table: request ids, matching, and handing each request or
// WebSocket upgrade to its entry; errors are answered through error-reply.ts.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../log.js';
import type { RelayServices } from '../services.js';
import { ClientAbortedError, createContext, type Reply } from './context.js';
import { errorReply, refuseOnSocket } from './error-reply.js';
import { Router, type Miss } from './router.js';
import type { SubmissionEndpoint } from './admin-submission.js';
import { buildRoutes, type SocketEndpoints } from './routes.js';
import { explainListenError } from '../listen-error.js';
import { syncClockOffset } from '../storage/settings.js';

/**
 * An idle keep-alive connection: clients are told it lasts KEEP_ALIVE_ADVERTISED_S, and the server
 * holds it KEEP_ALIVE_HELD_MS. A client reuses an idle connection until the time advertised (undici,
 * the SDK's and fetch's client: two seconds less), so one the server had already closed is never
 * picked. With the two equal (node's default) the margin was those two seconds: a client whose
 * event loop stalled that long after an answer (a busy machine) sent its next request on a
 * connection the server was closing and got no answer at all ("other side closed"; a POST
 * without an Idempotency-Key cannot be retried). Held as long as a new connection that sends
 * nothing may stay by default (limits.httpHeadersTimeoutMs).
 */
const KEEP_ALIVE_ADVERTISED_S = 5;
const KEEP_ALIVE_HELD_MS = 15_000;

function send(res: http.ServerResponse, requestId: string, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  // nosniff on every answer: a JSON body carrying mail text must never be sniffed into HTML.
  const headers: Record<string, string | number> = { 'Request-Id': requestId, 'X-Content-Type-Options': 'nosniff', ...reply.headers };
  // Written here, node:http would advertise the time it holds the connection (KEEP_ALIVE_HELD_MS).
  if (res.shouldKeepAlive) headers['Keep-Alive'] = `timeout=${KEEP_ALIVE_ADVERTISED_S}`;
  let data: string | Buffer = '';
  if (reply.raw) {
    headers['Content-Type'] = reply.raw.contentType;
    data = reply.raw.data;
  } else if (reply.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    data = JSON.stringify(reply.body);
  }
  headers['Content-Length'] = Buffer.byteLength(data);
  res.writeHead(reply.status, headers);
  res.end(data);
}

export interface HttpServer {
  url: string;
  /** For protocols that upgrade the connection (the listen hub's WebSocket). */
  server: http.Server;
  close(): Promise<void>;
}

/** The error a request that matched no entry is answered with. */
function unmatched(match: Miss, method: string, pathname: string): ApiError {
  if (match.kind === 'method_not_allowed') {
    // Resend's SDK posts batches here; the specification has no batch send.
    const why = pathname === '/v1/emails/batch' ? 'batch sends are not supported, send each email with POST /v1/emails; ' : '';
    return new ApiError('method_not_allowed', `${method} is not allowed on ${pathname}; ${why}use ${match.allowed.join(' or ')}.`, {
      headers: { Allow: match.allowed.join(', ') },
    });
  }
  return new ApiError('not_found', `No route for ${method} ${pathname}.`);
}

/** The request target as a URL, or undefined when it is not one (answered 400 invalid_request). */
function requestUrl(target: string): URL | undefined {
  try {
    // An origin-form target is a path: "//x/v1/emails" is not the authority x and the path /v1/emails.
    return target.startsWith('/') ? new URL(`http://relay.invalid${target}`) : new URL(target);
  } catch {
    return undefined;
  }
}

// A path of plain segments (letters, digits, _ and -) with no query: the URL parser would give it
// back unchanged as its pathname, so the URL itself is made only if a handler asks for it
// (POST /v1/emails never does; building one cost about 1 – 3 us a request).
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+$/;

/** The request's path and its URL, or only its plain path (createContext makes the URL when asked); undefined when it is not one. */
function requestTarget(req: http.IncomingMessage): { pathname: string; url: URL | string } | undefined {
  const target = req.url ?? '/';
  if (PLAIN_PATH.test(target)) return { pathname: target, url: target };
  const url = requestUrl(target);
  return url && { pathname: url.pathname, url };
}

/**
 * What node:http's own parser errors are answered: invalid_request in the contract's error shape,
 * with a Request-Id as every answer has (CONTRACT section 1); time-outs 408, oversized headers 431,
 * else 400.
 */
function refuseUnparsed(socket: Duplex, error: NodeJS.ErrnoException): void {
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request was not received in time.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request headers are too large.']
        : [400, 'The request is not valid HTTP/1.1.'];
  refuseOnSocket(socket, newId('req'), new ApiError('invalid_request', message), status);
}

const BAD_TARGET = () => new ApiError('invalid_request', 'The request target is not a valid URL.');

function logUnexpected(log: Logger, requestId: string, error: unknown): void {
  if (error instanceof ApiError) return;
  // A client hanging up is routine on the internet, not something to wake anyone for.
  if (error instanceof ClientAbortedError) return log.debug('http', 'request aborted by the client', { request_id: requestId });
  const cause = (error as Error)?.cause as Error | undefined;
  log.error('http', 'request failed', { request_id: requestId, error: (error as Error)?.message, cause: cause?.message });
}

/** A WebSocket handshake: its upgrade entry takes the socket, or it is refused with an error answer. */
function onUpgrade(router: Router, log: Logger, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  const requestId = newId('req');
  const method = req.method ?? 'GET';
  const url = requestUrl(req.url ?? '/');
  if (!url) return refuseOnSocket(socket, requestId, BAD_TARGET());
  const match = router.matchUpgrade(method, url.pathname);
  const upgraded =
    match.kind === 'found'
      ? match.route.upgrade({ req, socket, head, url, requestId })
      : Promise.reject(unmatched(match, method, url.pathname));
  upgraded.catch((error: unknown) => {
    logUnexpected(log, requestId, error);
    refuseOnSocket(socket, requestId, error);
  });
}

/**
 * A client that sends its request and then closes its side (shutdown(SHUT_WR): `nc -q`, an
 * HTTP/1.0 script) still gets its answer, written before the socket is closed. node:http's default
 * (httpAllowHalfOpen false) aborted the request and closed the socket at the client's FIN, so an
 * async handler had nowhere to write: a POST /v1/emails admitted the email with no acknowledgement.
 * With it true node marks the last response of the connection to close the socket once written,
 * and still ends at once a connection that half-closes with nothing in progress (an idle
 * keep-alive one). No createServer option sets it (node 20 ignores one); it is the server's own field.
 */
function answerHalfClosedClients(server: http.Server): void {
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

export async function startHttpServer(services: RelayServices, sockets: SocketEndpoints, submission: SubmissionEndpoint): Promise<HttpServer> {
  const router = new Router(buildRoutes(services, sockets, submission));
  const { log, config } = services;

  const server = http.createServer(
    {
      // Slow-loris: a client gets this long to send its headers, and the whole request; node checks
      // both every connectionsCheckingInterval, so that is a fraction of the shorter one.
      headersTimeout: config.limits.httpHeadersTimeoutMs,
      requestTimeout: 120_000,
      connectionsCheckingInterval: Math.round(Math.max(100, Math.min(5_000, config.limits.httpHeadersTimeoutMs / 3))),
      keepAliveTimeout: KEEP_ALIVE_HELD_MS,
      maxHeaderSize: 16 * 1024,
      // node would answer a missing Host itself, with a bare 400: ours carries the error body.
      requireHostHeader: false,
    },
    (req, res) => {
      const requestId = newId('req');
      const started = performance.now();
      const method = req.method ?? 'GET';
      const target = requestTarget(req);
      if (!target) return send(res, requestId, errorReply(BAD_TARGET()));
      if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
        return send(res, requestId, errorReply(new ApiError('invalid_request', 'An HTTP/1.1 request must carry a Host header.')));
      }
      const { pathname } = target;
      const match = router.match(method, pathname);
      const ctx = createContext(req, target.url, requestId);
      let pending: Promise<Reply>;
      if (match.kind === 'found') {
        ctx.params = match.params;
        // The test clock as the database holds it: another relay on it may have just advanced it.
        pending = services.clock.adjustable
          ? syncClockOffset(services.db, services.clock).then(() => match.route.handler(ctx))
          : match.route.handler(ctx);
      } else {
        pending = Promise.reject(unmatched(match, method, pathname));
      }
      pending
        .catch((error: unknown) => {
          logUnexpected(log, requestId, error);
          return errorReply(error);
        })
        .then((reply) => {
          // A body we refused to read is dumped by node:http once the response finishes (read
          // and discarded, never buffered), so it cannot be parsed as the next request;
          // requestTimeout bounds how long a client may keep sending it.
          send(res, requestId, reply);
          log.debug('http', 'request', {
            request_id: requestId,
            method,
            path: pathname,
            status: reply.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
          });
        });
    },
  );
  answerHalfClosedClients(server);
  // An Expect other than 100-continue: node would answer a bare 417; the request is served as it
  // would be without the header (RFC 9110 lets a server ignore an expectation it does not know).
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => server.emit('request', req, res));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => onUpgrade(router, log, req, socket, head));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Answer only where nothing was written yet: otherwise a response may be under way.
    if ((socket as Socket).bytesWritten === 0) refuseUnparsed(socket, error);
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(explainListenError(error, { what: 'HTTP', flag: '--port', env: 'RAVEN_PORT', host: config.host, port: config.port })));
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}
