/**
 * ravenctl listen --forward-to URL [--events a,b]: receives the project's events live from the
 * relay's listen hub (a WebSocket at <base-url>/v1/listen) and POSTs each one to URL, signed with a
 * per-session secret exactly as the service signs webhooks (Service-Timestamp, Service-Signature,
 * Service-Event-Id), so a local handler can be tested with its real verification code.
 *
 * Output: the secret first (stderr for people; a {"secret"} JSON line on stdout with --json), then
 * one line per forwarded event. When the relay goes away the command reconnects with backoff and
 * says so on stderr. It runs until Ctrl-C (exit 130, handled in main.ts).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { EVENT_TYPES } from 'raven-email-sdk';
import { request } from 'undici';
import WebSocket from 'ws';
import { requireApiKey } from '../config.js';
import { action, type RunContext } from '../context.js';
import { NetworkError, RefusedError, UsageError } from '../errors.js';
import { listenSecret } from '../listen-secret.js';
import { addHelp, AUTH_CODES } from '../help.js';
import { statusStyle } from '../output.js';

interface Options {
  forwardTo?: string;
  events?: string;
  printSecret?: boolean;
}

/** The answer time the service gives a webhook endpoint (CONTRACT section 5). */
const FORWARD_TIMEOUT_MS = 10_000;
/** Reconnect delays after the connection drops: doubling, capped. */
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;
/** The relay pings every 30 s; this much silence means the connection is dead. */
const SILENCE_LIMIT_MS = 75_000;

function parseForwardTo(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('--forward-to must be an http(s) URL, e.g. http://localhost:3000/webhooks.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('--forward-to must be an http(s) URL, e.g. http://localhost:3000/webhooks.');
  }
  return url.href;
}

function parseEvents(value: string): string {
  const names = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  const unknown = names.filter((n) => n !== '*' && !(EVENT_TYPES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(`--events takes a comma-separated list of ${EVENT_TYPES.join(', ')} (or *).`);
  }
  return names.join(',');
}

/** <base-url>/v1/listen with ws:// or wss://. */
export function listenUrl(baseUrl: string, events: string | undefined): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/listen`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (events && events !== '*') url.searchParams.set('events', events);
  return url.href;
}

/** A WebSocket session that ended: why, and whether trying again could help. */
class SessionEnded extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

interface ForwardResult {
  time: string;
  event_id: string | null;
  event_type: string | null;
  email_id: string | null;
  status_code: number | null;
  error: string | null;
}

export function register(cmd: Command): void {
  cmd
    .addOption(new Option('--forward-to <url>', 'local URL that receives each event as a signed POST (required unless --print-secret)').argParser(parseForwardTo))
    .option('--events <list>', 'comma-separated event types to forward (default: all)', parseEvents)
    .option('--print-secret', 'print the signing secret only and exit (it stays the same across runs for this relay and key)')
    .action(action<Options>(async (ctx, opts) => listen(ctx, opts)));
  addHelp(cmd, {
    examples: [
      'ravenctl listen --forward-to http://localhost:3000/webhooks',
      'ravenctl listen --forward-to http://localhost:3000/hook --events email.delivered,email.bounced',
      'ravenctl listen --forward-to http://localhost:3000/hook --json',
    ],
    refused: [...AUTH_CODES, 'validation_error', 'not_found'],
    usage: ['missing_api_key'],
  });
  cmd.addHelpText(
    'after',
    [
      '',
      'Output: the signing secret first (stderr; with --json a {"secret"} line on stdout), then one line per',
      'forwarded event (with --json, JSON Lines: {"time","event_id","event_type","email_id","status_code","error"}).',
      'Runs until Ctrl-C; when the relay restarts it reconnects and says so on stderr.',
    ].join('\n'),
  );
}

async function listen(ctx: RunContext, opts: Options): Promise<void> {
  const forwardTo = opts.forwardTo;
  if (forwardTo === undefined && !opts.printSecret) throw new UsageError('--forward-to <url> is required (or --print-secret).');
  const target = await requireApiKey(ctx.globals, ctx.env);
  const secret = await listenSecret(target.baseUrl, target.apiKey, ctx.env);
  if (opts.printSecret || forwardTo === undefined) {
    ctx.out.result({ secret }, () => secret);
    return;
  }
  const wsUrl = listenUrl(target.baseUrl, opts.events);
  const { signWebhook } = await ctx.sdk();
  const out = ctx.out;
  const stderr = (line: string) => out.stderr.write(`${line}\n`);

  const forward = async (raw: Buffer): Promise<ForwardResult> => {
    let event: { id?: unknown; type?: unknown; data?: { email_id?: unknown } } = {};
    try {
      event = JSON.parse(raw.toString('utf8')) as typeof event;
    } catch {
      // Forwarded anyway: the receiver decides what an unparseable body means.
    }
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    const result: ForwardResult = {
      time: new Date().toISOString(),
      event_id: str(event.id),
      event_type: str(event.type),
      email_id: str(event.data?.email_id),
      status_code: null,
      error: null,
    };
    // Signed with this machine's clock: the local receiver checks the timestamp against it.
    const signed = signWebhook(raw, secret);
    try {
      const res = await request(forwardTo, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Raven-Webhooks/1 (ravenctl listen)',
          'service-timestamp': signed.timestamp,
          'service-signature': signed.signature,
          ...(result.event_id ? { 'service-event-id': result.event_id } : {}),
        },
        body: raw,
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      result.status_code = res.statusCode;
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    } catch (error) {
      const err = error as Error & { code?: string; cause?: Error & { code?: string } };
      result.error =
        err.name === 'TimeoutError' ? `timed out after ${FORWARD_TIMEOUT_MS / 1000} s` : (err.cause?.code ?? err.code ?? err.message);
    }
    return result;
  };

  const report = (r: ForwardResult) => {
    if (out.json) {
      out.stdout.write(`${JSON.stringify(r)}\n`);
      return;
    }
    const ok = r.status_code !== null && r.status_code >= 200 && r.status_code < 300;
    const outcome =
      r.status_code !== null
        ? out.paint(ok ? 'green' : 'red', `[${r.status_code}]`)
        : out.paint('red', `[error: ${r.error ?? 'unknown'}]`);
    const type = r.event_type ?? '(unknown type)';
    out.stdout.write(
      `${out.paint('dim', r.time)}  ${out.paint(statusStyle(type.replace(/^email\./, '')), type.padEnd(22))}  ${r.email_id ?? '-'}  --> ${outcome} POST ${forwardTo}\n`,
    );
  };

  /** One connection: resolves when it closes (retry may help), rejects when it was refused. */
  const session = (onOpen: () => void): Promise<never> =>
    new Promise<never>((_, reject) => {
      const ws = new WebSocket(wsUrl, {
        headers: { authorization: `Bearer ${target.apiKey}` },
        handshakeTimeout: 10_000,
        perMessageDeflate: false,
      });
      let opened = false;
      let silence: NodeJS.Timeout | undefined;
      const feelAlive = () => {
        if (silence) clearTimeout(silence);
        silence = setTimeout(() => ws.terminate(), SILENCE_LIMIT_MS);
      };
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let code = `http_${res.statusCode}`;
          let message = `the relay refused the connection (HTTP ${res.statusCode})`;
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string; message?: string } };
            if (body.error?.code) code = body.error.code;
            if (body.error?.message) message = body.error.message;
          } catch {
            // not a JSON error body: keep the generic message
          }
          const status = res.statusCode ?? 0;
          if (status === 404) message = `${target.baseUrl} has no ${'/v1/listen'} endpoint (is it a Raven relay?)`;
          const error = new RefusedError(code, message, { status });
          // 5xx: the relay is there but not ready (shutting down, storage busy): try again.
          reject(status >= 500 ? new SessionEnded(message, true) : error);
          ws.terminate();
        });
      });
      ws.on('open', () => {
        opened = true;
        feelAlive();
        onOpen();
      });
      ws.on('ping', feelAlive);
      ws.on('message', (data, isBinary) => {
        feelAlive();
        if (isBinary) return;
        const raw = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
        void forward(raw).then(report);
      });
      ws.on('error', (error: Error & { code?: string }) => {
        if (!opened) reject(new SessionEnded(error.code ?? error.message, true));
      });
      ws.on('close', (code, reason) => {
        if (silence) clearTimeout(silence);
        const why = reason.length > 0 ? reason.toString('utf8') : code === 1006 ? 'connection lost' : `closed (${code})`;
        reject(new SessionEnded(why, true));
      });
    });

  out.hint(`Connecting to ${wsUrl} ...`);
  let everConnected = false;
  let lost = false;
  let delay = RECONNECT_MIN_MS;
  for (;;) {
    try {
      await session(() => {
        delay = RECONNECT_MIN_MS;
        lost = false;
        if (!everConnected) {
          everConnected = true;
          if (out.json) out.stdout.write(`${JSON.stringify({ secret })}\n`);
          else stderr(`Ready! Your webhook signing secret is ${out.paintErr('bold', secret)} (^C to quit)`);
        } else {
          stderr('Reconnected to the relay; forwarding again.');
        }
      });
    } catch (error) {
      if (!(error instanceof SessionEnded)) throw error;
      if (!everConnected) {
        throw new NetworkError('connection_error', `cannot connect to ${wsUrl}: ${error.message}`);
      }
      const wait = `${(delay / 1000).toFixed(1)} s`;
      stderr(
        lost
          ? `Still cannot reach the relay (${error.message}); retrying in ${wait} ...`
          : `Lost the connection to the relay (${error.message}); reconnecting in ${wait} ...`,
      );
      lost = true;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(RECONNECT_MAX_MS, delay * 2);
    }
  }
}
