// Checks real traffic against openapi.yaml. Tests put `startContractProxy` between a client and
// the relay; every response that crosses it is validated, and the test asserts no violations.
//
// The validators are Ajv's, compiled from the document on first use. Under `npm test` the run's
// transpiled copy of the tests (helpers/child-build.ts) also holds the document as JSON and every
// schema's validator compiled once for the run (writeCompiledContract, Ajv's standalone code):
// parsing the YAML, loading Ajv and registering the document took each test file about 0.4 CPU s.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv2020 as Ajv, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

// OpenAPI documents are loose JSON trees; a precise type would not make this helper safer.
type Node = Record<string, any>;

const SPEC_URL = new URL('../../openapi.yaml', import.meta.url);
/** What writeCompiledContract leaves beside this file in the run's copy. */
const COMPILED_SPEC = new URL('./contract-spec.json', import.meta.url);
const COMPILED_VALIDATORS = new URL('./contract-validators.cjs', import.meta.url);

const require = createRequire(import.meta.url);

export const spec: Node = existsSync(COMPILED_SPEC)
  ? JSON.parse(readFileSync(COMPILED_SPEC, 'utf8'))
  : ((require('js-yaml') as typeof import('js-yaml')).load(readFileSync(fileURLToPath(SPEC_URL), 'utf8')) as Node);

// Ajv resolves every "#/components/..." $ref against the whole document registered under this id.
const SPEC_ID = 'https://raven.invalid/openapi.json';
const FORMATS: Record<string, RegExp | true> = {
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/,
  uri: /^[a-z][a-z0-9+.-]*:\S+$/i,
  binary: true, // the raw message's download: not JSON, never validated, but compiled with the rest
};

let ajv: Ajv | undefined;
function compiler(): Ajv {
  if (ajv) return ajv;
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  // code.source: the standalone code needs each validator's source (regular-expression formats are inlined).
  ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, code: { source: true } });
  for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
  ajv.addSchema(spec, SPEC_ID);
  return ajv;
}

/** The run's compiled validators by pointer, when this is the run's copy. */
const compiled: Record<string, ValidateFunction> | undefined = existsSync(COMPILED_VALIDATORS) ? require(fileURLToPath(COMPILED_VALIDATORS)) : undefined;

/** Every pointer validateAt may be asked for: each `schema` of the document, and where its $ref leads. */
function schemaPointers(node: unknown = spec, pointer = '', found = new Set<string>([ERROR_SCHEMA])): Set<string> {
  if (node === null || typeof node !== 'object') return found;
  for (const [key, value] of Object.entries(node)) {
    const at = `${pointer}/${escapePointer(key)}`;
    if (key === 'schema' && value !== null && typeof value === 'object') found.add(at).add(resolve(value as Node, at).pointer);
    schemaPointers(value, at, found);
  }
  return found;
}

/**
 * Writes the document as JSON and every schema's validator (Ajv's standalone code) into `dir`,
 * the run's copy of this folder, for the copies of this module the test files load there.
 */
export function writeCompiledContract(dir: string): void {
  const ajv = compiler();
  const standaloneCode = (require('ajv/dist/standalone/index.js') as typeof import('ajv/dist/standalone/index.js')).default;
  const refs = Object.fromEntries([...schemaPointers()].map((pointer) => [pointer, `${SPEC_ID}#${pointer}`]));
  writeFileSync(path.join(dir, path.basename(fileURLToPath(COMPILED_VALIDATORS))), standaloneCode(ajv, refs));
  writeFileSync(path.join(dir, path.basename(fileURLToPath(COMPILED_SPEC))), JSON.stringify(spec));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows `$ref`s inside the document; returns the node and its JSON pointer. */
function resolve(node: Node, pointer: string): { node: Node; pointer: string } {
  while (typeof node.$ref === 'string') {
    pointer = node.$ref.replace(/^#/, '');
    node = pointer
      .split('/')
      .slice(1)
      .reduce((n: Node, s) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return { node, pointer };
}

function validateAt(pointer: string, value: unknown): string[] {
  const validate = compiled?.[pointer] ?? compiler().getSchema(`${SPEC_ID}#${pointer}`);
  if (!validate) return [`no schema at ${pointer}`];
  if (validate(value)) return [];
  return (validate.errors ?? []).map(formatError);
}

function formatError(e: ErrorObject): string {
  const where = e.instancePath || '(body)';
  const extra =
    'additionalProperty' in e.params
      ? ` (${e.params.additionalProperty})`
      : e.keyword === 'not' && (e.schema as Node | undefined)?.description
        ? ` (${(e.schema as Node).description})`
        : '';
  return `${where} ${e.message}${extra}`;
}

// Literal paths first, so "/admin/v1/clock/advance" never loses to a templated sibling.
const routes = Object.keys(spec.paths)
  .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  .map((template) => ({
    template,
    regex: new RegExp(
      `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
    ),
  }));

type Lookup =
  | { kind: 'operation'; template: string; operation: Node; pointer: string }
  | { kind: 'unknown-path' }
  | { kind: 'wrong-method'; template: string };

/** Finds the operation for a request; `path` may carry a query string. */
export function findOperation(method: string, path: string): Lookup {
  const pathname = path.split('?')[0];
  const route = routes.find((r) => r.regex.test(pathname));
  if (!route) return { kind: 'unknown-path' };
  const verb = method.toLowerCase();
  const operation = METHODS.includes(verb) ? spec.paths[route.template][verb] : undefined;
  if (!operation) return { kind: 'wrong-method', template: route.template };
  return {
    kind: 'operation',
    template: route.template,
    operation,
    pointer: `/paths/${escapePointer(route.template)}/${verb}`,
  };
}

export interface ResponseToCheck {
  method: string;
  path: string;
  status: number;
  contentType?: string;
  /** Parsed JSON, or the raw text (parsed here when the content type is JSON). */
  body?: unknown;
  /** Response headers as node:http gives them; omit to skip the header checks. */
  headers?: http.IncomingHttpHeaders;
}

const ERROR_SCHEMA = '/components/schemas/Error';
const REQUEST_ID_HEADER = { $ref: '#/components/headers/RequestId' };

/** Every way this response departs from openapi.yaml, as human-readable lines. */
export function validateResponse(r: ResponseToCheck): string[] {
  const prefix = `${r.method.toUpperCase()} ${r.path} -> ${r.status}:`;
  const problems: string[] = [];
  const lookup = findOperation(r.method, r.path);

  // Unknown routes and wrong methods are answered before routing, so no operation lists them.
  let response: Node;
  let responsePointer: string;
  if (lookup.kind !== 'operation') {
    const expected = lookup.kind === 'unknown-path' ? 404 : 405;
    if (r.status !== expected) {
      const why = lookup.kind === 'unknown-path' ? 'no path in openapi.yaml matches' : `${lookup.template} has no such method`;
      return [`${prefix} ${why}; expected ${expected}`];
    }
    response = {
      headers: { 'Request-Id': REQUEST_ID_HEADER },
      content: { 'application/json': { schema: { $ref: `#${ERROR_SCHEMA}` } } },
    };
    responsePointer = '';
  } else {
    const responses: Node = lookup.operation.responses;
    const key = [String(r.status), `${String(r.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) {
      const documented = Object.keys(responses).join(', ');
      return [`${prefix} status not documented for ${r.method.toUpperCase()} ${lookup.template} (documented: ${documented})`];
    }
    ({ node: response, pointer: responsePointer } = resolve(
      responses[key],
      `${lookup.pointer}/responses/${escapePointer(key)}`,
    ));
  }

  if (r.headers) problems.push(...checkHeaders(response, r.headers));
  problems.push(...checkBody(response, responsePointer, r));
  return problems.map((p) => `${prefix} ${p}`);
}

function checkHeaders(response: Node, headers: http.IncomingHttpHeaders): string[] {
  const problems: string[] = [];
  const documented: Node = { 'Request-Id': REQUEST_ID_HEADER, ...(response.headers ?? {}) };
  for (const [name, ref] of Object.entries(documented)) {
    const { node: header, pointer } = resolve(ref as Node, '');
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`missing header ${name}`);
      continue;
    }
    if (Array.isArray(value)) {
      problems.push(`header ${name} appears ${value.length} times`);
      continue;
    }
    if (!header.schema || !pointer) continue;
    const typed = header.schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    for (const p of validateAt(`${pointer}/schema`, typed)) problems.push(`header ${name}: ${p.replace('(body) ', '')}`);
  }
  return problems;
}

function checkBody(response: Node, pointer: string, r: ResponseToCheck): string[] {
  const content: Node | undefined = response.content;
  const hasBody = r.body !== undefined && r.body !== '';
  if (!content) return hasBody ? ['a body was sent where none is documented'] : [];

  const mediaType = (r.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (!(mediaType in content)) {
    return [`content type "${r.contentType ?? ''}" not documented (documented: ${Object.keys(content).join(', ')})`];
  }
  if (!/^application\/(.+\+)?json$/.test(mediaType)) return []; // metrics, raw messages: not JSON

  let body = r.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return ['body is not valid JSON'];
    }
  }
  const schemaPointer = pointer
    ? `${pointer}/content/${escapePointer(mediaType)}/schema`
    : ERROR_SCHEMA; // the synthetic 404/405 response
  return validateAt(resolve(content[mediaType].schema, schemaPointer).pointer, body);
}

/** Validates a request body against the operation's JSON request schema. */
export function validateRequestBody(method: string, path: string, body: unknown): string[] {
  const prefix = `${method.toUpperCase()} ${path}:`;
  const lookup = findOperation(method, path);
  if (lookup.kind !== 'operation') return [`${prefix} no such operation in openapi.yaml`];
  if (!lookup.operation.requestBody) return [`${prefix} operation takes no request body`];
  const { node: requestBody, pointer } = resolve(lookup.operation.requestBody, `${lookup.pointer}/requestBody`);
  const media = requestBody.content?.['application/json'];
  if (!media) return [`${prefix} no application/json request body documented`];
  const schemaPointer = resolve(media.schema, `${pointer}/content/application~1json/schema`).pointer;
  return validateAt(schemaPointer, body).map((p) => `${prefix} ${p}`);
}

export interface ContractProxy {
  url: string;
  violations: string[];
  close(): Promise<void>;
}

// JSON bodies beyond this are not buffered for validation (none should come close).
const MAX_CHECKED_BODY = 16 * 1024 * 1024;

/**
 * An HTTP proxy on 127.0.0.1 that forwards every request unchanged to `targetBaseUrl` and
 * validates every response against openapi.yaml. WebSocket upgrades are piped through unchecked.
 */
export async function startContractProxy(targetBaseUrl: string): Promise<ContractProxy> {
  const target = new URL(targetBaseUrl);
  const violations: string[] = [];
  const tunnels = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    const requestLine = `${req.method} ${req.url}`;
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.rawHeaders, // keeps repeated headers and their order
        setHost: false,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.statusMessage, up.rawHeaders);
        const contentType = up.headers['content-type'] ?? '';
        const checkBody = /json/i.test(contentType);
        const chunks: Buffer[] = [];
        let size = 0;
        up.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (checkBody && size <= MAX_CHECKED_BODY) chunks.push(chunk);
          res.write(chunk);
        });
        up.on('end', () => {
          res.end();
          const text = Buffer.concat(chunks).toString('utf8');
          violations.push(
            ...validateResponse({
              method: req.method ?? 'GET',
              path: req.url ?? '/',
              status: up.statusCode ?? 0,
              contentType,
              body: checkBody ? text : size > 0 ? '<non-JSON body>' : undefined,
              headers: up.headers,
            }),
          );
        });
        up.on('error', () => res.destroy());
      },
    );
    // A relay may answer (413) and close before the request body is fully sent: not an error here.
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        violations.push(`${requestLine}: proxy could not reach the target: ${err.message}`);
        res.writeHead(502).end();
      } else {
        res.destroy();
      }
    });
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  });

  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const upstream = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    for (const s of [socket, upstream]) {
      tunnels.add(s);
      s.on('error', () => {
        socket.destroy();
        upstream.destroy();
      });
      s.on('close', () => {
        tunnels.delete(s);
        (s === socket ? upstream : socket).destroy();
      });
    }
  });

  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as net.AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    violations,
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const s of tunnels) s.destroy();
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/** Fails the test with every violation the proxy collected. */
export function assertNoViolations(proxy: Pick<ContractProxy, 'violations'>): void {
  assert.deepEqual(proxy.violations, [], `contract violations:\n${proxy.violations.join('\n')}`);
}
