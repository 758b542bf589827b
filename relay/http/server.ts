// node:http in front of the route table: request ids, matching, authentication, and the one
// place an error becomes a response.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../errors.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import { isStorageFault } from '../storage/db.js';
import { createContext, type Reply } from './context.js';
import { Router } from './router.js';
import { buildRoutes } from './routes.js';

export function errorReply(error: unknown): Reply {
  if (error instanceof ApiError) {
    const body: Record<string, unknown> = { code: error.code, message: error.message };
    const headers: Record<string, string | number> = { ...error.extra.headers };
    if (error.extra.retryAfter !== undefined) {
      body.retry_after = error.extra.retryAfter;
      headers['Retry-After'] = error.extra.retryAfter;
    }
    if (error.code === 'validation_error') body.details = error.extra.details ?? [];
    return { status: error.status, body: { error: body }, headers };
  }
  // Busy, full or failing storage (from the writer or a read) is temporary: 503, never 500.
  if (isStorageFault(error)) {
    return errorReply(
      new ApiError('service_unavailable', 'Storage is temporarily unavailable; retry after 1 second.', { retryAfter: 1 }),
    );
  }
  return { status: 500, body: { error: { code: 'internal_error', message: 'An internal error occurred.' } } };
}

function send(res: http.ServerResponse, requestId: string, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = { 'Request-Id': requestId, ...reply.headers };
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

export async function startHttpServer(services: RelayServices): Promise<HttpServer> {
  const router = new Router(buildRoutes(services));
  const { log, config } = services;

  const server = http.createServer(
    {
      // Slow-loris: a client gets this long to send its headers, and the whole request.
      headersTimeout: 15_000,
      requestTimeout: 120_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      const requestId = newId('req');
      const started = performance.now();
      const method = req.method ?? 'GET';
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://relay.invalid');
      } catch {
        send(res, requestId, errorReply(new ApiError('invalid_request', 'The request target is not a valid URL.')));
        return;
      }
      const match = router.match(method, url.pathname);
      const ctx = createContext(req, url, requestId);
      let pending: Promise<Reply>;
      if (match.kind === 'not_found') {
        pending = Promise.reject(new ApiError('not_found', `No route for ${method} ${url.pathname}.`));
      } else if (match.kind === 'method_not_allowed') {
        pending = Promise.reject(
          new ApiError('method_not_allowed', `${method} is not allowed on ${url.pathname}; use ${match.allowed.join(' or ')}.`, {
            headers: { Allow: match.allowed.join(', ') },
          }),
        );
      } else {
        ctx.params = match.params;
        pending = match.route.handler(ctx);
      }
      pending
        .catch((error: unknown) => {
          if (!(error instanceof ApiError)) {
            const cause = (error as Error)?.cause as Error | undefined;
            log.error('http', 'request failed', { request_id: requestId, error: (error as Error)?.message, cause: cause?.message });
          }
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
            path: url.pathname,
            status: reply.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
          });
        });
    },
  );
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
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
