// What a route handler receives, and what it returns.
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.js';
import { JsonSyntaxError, parseStrictJson } from './strict-json.js';

export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is given. */
  body?: unknown;
  raw?: { contentType: string; data: string | Buffer };
  headers?: Record<string, string | number>;
}

export interface RequestContext {
  req: IncomingMessage;
  url: URL;
  params: Record<string, string>;
  requestId: string;
  /** The single value of a header that must not repeat; a repeat is 400 invalid_request. */
  singleHeader(name: string): string | undefined;
  /** The body, refused past maxBytes with 413 while streaming. */
  readBody(maxBytes: number): Promise<Buffer>;
  /** readBody + Content-Type check + UTF-8 + strict JSON parse. */
  readJson(maxBytes: number): Promise<unknown>;
}

// Stateless once a decode is complete (no `stream` option), so one serves every request.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `url` is the request's URL, or a plain path (server.ts, requestTarget) whose URL is made when first asked for. */
export function createContext(req: IncomingMessage, url: URL | string, requestId: string): RequestContext {
  return new Context(req, url, requestId);
}

// A class rather than an object of closures: every request makes one, and its methods are then
// shared instead of created (and, under tsx, named) per request.
class Context implements RequestContext {
  params: Record<string, string> = {};
  private bodyPromise: Promise<Buffer> | undefined;

  constructor(
    readonly req: IncomingMessage,
    private target: URL | string,
    readonly requestId: string,
  ) {}

  // Most requests (POST /v1/emails) never read their URL beyond the path the router matched.
  get url(): URL {
    if (typeof this.target === 'string') this.target = new URL(this.target, 'http://relay.invalid');
    return this.target;
  }

  // From rawHeaders rather than headersDistinct, which node builds whole (every header, an array
  // each) on first use: a name is matched as node matches it, whatever its case.
  singleHeader(name: string): string | undefined {
    const raw = this.req.rawHeaders;
    let value: string | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      const header = raw[i]!;
      if (header.length !== name.length || header.toLowerCase() !== name) continue;
      if (value !== undefined) throw new ApiError('invalid_request', `The ${name} header must not be repeated.`);
      value = raw[i + 1]!;
    }
    return value;
  }

  readBody(maxBytes: number): Promise<Buffer> {
    const req = this.req;
    this.bodyPromise ??= new Promise<Buffer>((resolve, reject) => {
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBytes) {
        reject(tooLarge(maxBytes));
        return;
      }
      // A client that went away (or broke the chunked encoding) before the body ended: after
      // that no 'end' and, once the request is destroyed, no 'error' either.
      if (req.destroyed) {
        reject(new ClientAbortedError());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          req.removeAllListeners('data');
          req.resume();
          reject(tooLarge(maxBytes));
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks, size)));
      req.on('error', () => reject(new ClientAbortedError()));
      req.on('close', () => {
        if (!req.complete) reject(new ClientAbortedError());
      });
    });
    return this.bodyPromise;
  }

  async readJson(maxBytes: number): Promise<unknown> {
    const contentType = this.req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      // Drain the body so the connection stays usable, but never beyond the limit: a body over it
      // is still 413 (CONTRACT section 2 checks the size before the JSON).
      await this.readBody(maxBytes);
      throw new ApiError('invalid_request', 'Content-Type must be application/json.');
    }
    const raw = await this.readBody(maxBytes);
    let text: string;
    try {
      text = UTF8.decode(raw);
    } catch {
      throw new ApiError('invalid_request', 'The body is not valid UTF-8.');
    }
    try {
      return parseStrictJson(text);
    } catch (error) {
      if (error instanceof JsonSyntaxError) throw new ApiError('invalid_request', `The body is not valid JSON: ${error.message}.`);
      throw error;
    }
  }
}

/**
 * The client closed the connection or sent a malformed chunk before its body ended: its own
 * doing, not the relay's (answered 400 if anyone is still listening, logged at debug, counted
 * apart from refusals).
 */
export class ClientAbortedError extends Error {
  override name = 'ClientAbortedError';
  constructor() {
    super('The request ended before its body did (the connection closed, or a chunk was malformed).');
  }
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('message_too_large', `The request exceeds the limit of ${maxBytes} bytes.`);
}
