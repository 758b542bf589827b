/** ravenctl send: submit one email; optionally wait for its final outcome. */
import { randomUUID } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { EmailDetail, SendEmailRequest, SendEmailResult } from 'raven-email-sdk';
import { redactKey } from '../output.js';
import { action, type RunContext } from '../context.js';
import { NetworkError, RefusedError, toCliError, UsageError } from '../errors.js';
import { addHelp, AUTH_CODES, collect, parseIntegerOption } from '../help.js';
import { readFileOrStdin } from '../io.js';
import { renderFields, shellWord, statusStyle } from '../output.js';
import { collectPairs, mailboxProblem, parseMailbox, subjectProblems, validateSendBody, validIdempotencyKey, type SendBody } from '../send-request.js';

interface Options {
  from?: string;
  to?: string[];
  subject?: string;
  text?: string;
  textFile?: string;
  html?: string;
  htmlFile?: string;
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  header?: string[];
  tag?: string[];
  metadata?: string[];
  idempotencyKey?: string;
  wait?: boolean;
  waitTimeout: number;
  dryRun?: boolean;
}

/** Final email statuses that mean "not delivered": `send --wait` exits 1 on these. */
const FAILED_FINAL = new Set(['bounced', 'failed', 'delivery_unknown', 'suppressed']);

export const SEND_REFUSED_CODES = [
  ...AUTH_CODES,
  'validation_error',
  'domain_not_verified',
  'test_recipient_not_allowed',
  'idempotency_conflict',
  'rate_limit_exceeded',
  'quota_exceeded',
  'message_too_large',
  'invalid_request',
  'internal_error',
  'email_bounced',
  'email_failed',
  'email_delivery_unknown',
  'email_suppressed',
  'wait_timeout',
] as const;

export function register(cmd: Command): void {
  cmd
    .option('--from <mailbox>', 'sender: addr@domain or "Name <addr@domain>" on a verified domain')
    .option('--to <mailbox>', 'recipient (repeat for several)', collect)
    .option('--subject <text>', 'subject, 1 to 998 characters, one line')
    .addOption(new Option('--text <body>', 'plain-text body').conflicts('textFile'))
    .option('--text-file <file>', 'read the plain-text body from a file ("-" for stdin)')
    .addOption(new Option('--html <body>', 'HTML body').conflicts('htmlFile'))
    .option('--html-file <file>', 'read the HTML body from a file ("-" for stdin)')
    .option('--cc <mailbox>', 'CC recipient (repeat for several)', collect)
    .option('--bcc <mailbox>', 'BCC recipient (repeat for several)', collect)
    .option('--reply-to <mailbox>', 'Reply-To mailbox')
    .option('--header <"Name: value">', 'custom header (repeat for several)', collect)
    .option('--tag <key=value>', 'tag (repeat; up to 20, ASCII letters, digits, _ and -)', collect)
    .option('--metadata <key=value>', 'metadata entry kept with the email (repeat; no secrets)', collect)
    .option('--idempotency-key <key>', 'key for safe retries (default: a new UUID, printed)')
    .option('--wait', 'poll until every recipient has a final outcome; exit 1 if it bounced, failed, is unknown or suppressed')
    .option('--wait-timeout <seconds>', 'give up waiting after this long', parseIntegerOption('--wait-timeout', 1, 86_400), 300)
    .option('--dry-run', 'check the request locally and print it; send nothing')
    .action(action<Options>(send));
  addHelp(cmd, {
    notes: [
      'In a terminal, a missing --from, --to or --subject is asked for and checked as you answer (the',
      "From against the key's verified domains too), and a missing body is written in your editor",
      '($VISUAL or $EDITOR; typed inline when that editor is not installed), as text or HTML. Without a',
      'terminal (piped, --json, or CI set) nothing is asked: a missing field is a usage error naming its flag.',
    ],
    examples: [
      'ravenctl send --from "Acme <hello@example.test>" --to ada@example.test --subject "Welcome" --text "Hi Ada"',
      'ravenctl send --from hello@example.test --to a@example.test --to b@example.test --subject Report --html-file report.html --tag campaign=spring',
      'echo "Hello" | ravenctl send --from hello@example.test --to ada@example.test --subject Hi --text-file - --wait',
      'ravenctl send ... --idempotency-key order-1234-receipt --json',
      'ravenctl send ... --dry-run',
    ],
    refused: SEND_REFUSED_CODES,
    usage: ['missing_api_key'],
  });
}

const BODY_FORMATS = ['text', 'html'] as const;

const splitRecipients = (answer: string) => answer.split(',').map((s) => s.trim()).filter((s) => s !== '');

async function readBodyFlag(inline: string | undefined, file: string | undefined, flag: string): Promise<string | undefined> {
  if (file !== undefined) return (await readFileOrStdin(file, flag)).toString('utf8');
  return inline;
}

async function buildBody(ctx: RunContext, opts: Options): Promise<SendBody> {
  if (opts.textFile === '-' && opts.htmlFile === '-') {
    throw new UsageError('--text-file - and --html-file - cannot both read stdin');
  }
  // Parse the repeatable key/value flags first: a malformed one is a usage error before any prompt.
  const headers = collectPairs('--header', opts.header);
  const tags = collectPairs('--tag', opts.tag);
  const metadata = collectPairs('--metadata', opts.metadata);
  let text = await readBodyFlag(opts.text, opts.textFile, '--text-file');
  let html = await readBodyFlag(opts.html, opts.htmlFile, '--html-file');

  // Each answer is checked as it is given, with the API's own rules, so a typo is fixed at once;
  // the sender's domain against the key's project too (GET /v1/domains), before a body is written.
  const senders = ctx.ask.interactive && !opts.dryRun ? senderDomains(ctx) : undefined;
  const from = await ctx.ask.text(opts.from, '--from', 'From (addr@domain or Name <addr@domain>)', async (v) => mailboxProblem(v) ?? (await senders?.problem(v)) ?? true);
  if (senders && !text && !html) {
    // Given as --from: nothing asked it yet, and the body is about to be.
    const problem = await senders.problem(from);
    if (problem) throw new RefusedError('domain_not_verified', `${problem}; nothing was sent`);
  }
  let to = opts.to ?? [];
  if (to.length === 0) {
    const answer = await ctx.ask.text(undefined, '--to', 'To (comma separated)', (v) => {
      const list = splitRecipients(v);
      return list.length === 0 ? 'at least one recipient' : (list.map(mailboxProblem).find(Boolean) ?? true);
    });
    to = splitRecipients(answer);
  }
  const subject = await ctx.ask.text(opts.subject, '--subject', 'Subject', (v) => subjectProblems(v)[0] ?? true);
  if (!text && !html) {
    if (!ctx.ask.interactive) {
      throw new UsageError('missing required option --text (or --html, --text-file, --html-file)', 'missing_option');
    }
    const format = await ctx.ask.select(undefined, '--text', 'Body', BODY_FORMATS);
    const written = await ctx.ask.editor(
      format === 'text' ? '--text' : '--html',
      `${format === 'text' ? 'Text' : 'HTML'} body, written in your editor ($VISUAL or $EDITOR)`,
      format === 'text' ? '.txt' : '.html',
      (v) => (v.trim() === '' ? 'the body is empty' : true),
    );
    if (format === 'text') text = written;
    else html = written;
  }

  const body: SendBody = { from, to, subject };
  if (text !== undefined && text !== '') body.text = text;
  if (html !== undefined && html !== '') body.html = html;
  if (opts.cc && opts.cc.length > 0) body.cc = opts.cc;
  if (opts.bcc && opts.bcc.length > 0) body.bcc = opts.bcc;
  if (opts.replyTo !== undefined) body.reply_to = opts.replyTo;
  if (headers) body.headers = headers;
  if (tags) body.tags = tags;
  if (metadata) body.metadata = metadata;
  return body;
}

/**
 * The key's sender domains, read once when first needed: `problem(from)` says why a From would be
 * refused with domain_not_verified, naming the verified domains. A relay without GET /v1/domains
 * (404) checks nothing here; the send still does.
 */
function senderDomains(ctx: RunContext): { problem(from: string): Promise<string | undefined> } {
  let verified: Promise<string[] | undefined> | undefined;
  const load = async (): Promise<string[] | undefined> => {
    const { client } = await ctx.raven();
    try {
      const { domains } = await client.domains.list();
      return domains.filter((d) => d.status === 'verified').map((d) => d.name.toLowerCase());
    } catch (error) {
      const failure = toCliError(error, await ctx.sdk());
      if (failure.status === 404) return undefined;
      throw failure;
    }
  };
  return {
    async problem(from) {
      const mailbox = parseMailbox(from);
      if (typeof mailbox === 'string') return undefined; // the syntax check names it
      const names = await (verified ??= load());
      if (names === undefined || names.includes(mailbox.domain.toLowerCase())) return undefined;
      const known = names.length === 0 ? "the key's project has no verified domain" : `verified: ${names.join(', ')}`;
      return `${mailbox.domain} is not a verified domain of this key's project (${known})`;
    },
  };
}

async function send(ctx: RunContext, opts: Options): Promise<void> {
  const body = await buildBody(ctx, opts);
  const generated = opts.idempotencyKey === undefined;
  // One key per logical send, reused by every retry (the SDK retries with it; a person re-running
  // the command passes it back with --idempotency-key): the server then never sends twice.
  const idempotencyKey = opts.idempotencyKey ?? randomUUID();

  if (opts.dryRun) return dryRun(ctx, body, idempotencyKey);

  const { client } = await ctx.raven();
  let result: SendEmailResult;
  try {
    result = await client.emails.send(body as SendEmailRequest, { idempotencyKey });
  } catch (error) {
    // No answer: the email may or may not be queued. The same key makes a retry safe.
    const failure = toCliError(error, await ctx.sdk());
    const retry = retryCommand(process.argv.slice(2), body, opts, generated ? idempotencyKey : undefined);
    if (!(failure instanceof NetworkError)) {
      // Refused after prompts: nothing was stored, and what was typed (a body, perhaps) is kept in
      // a command to fix and run again rather than lost.
      if (wasPrompted(opts)) failure.message += `\nwhat you typed, as a command to fix and run again:\n  ${retry}`;
      throw failure;
    }
    throw new NetworkError(failure.code === 'timeout' ? 'timeout' : 'connection_error', `${failure.message}\nit may have been queued; retry safely (it is sent at most once) with:\n  ${retry}`, { cause: error });
  }

  if (!opts.wait || result.status === 'suppressed') {
    ctx.out.result({ ...result, idempotency_key: idempotencyKey }, () => renderAdmission(ctx, result));
    if (result.status === 'suppressed') {
      if (opts.wait) throw new RefusedError('email_suppressed', `email ${result.id} was suppressed (${result.reason}); nothing was sent`);
      ctx.out.warn(`a recipient is suppressed (${result.reason}); nothing will be sent`);
    }
    return;
  }

  // Loaded here, not at start-up: render.ts reads the SDK's status lists, and a dry run (or a send
  // without --wait) should not pay for loading the SDK before it needs it.
  const { isTerminal, renderEmailDetail, waitingReason } = await import('../render.js');
  const detail = await waitForFinal(ctx, client, result.id, opts.waitTimeout, isTerminal);
  ctx.out.result({ ...detail, idempotency_key: idempotencyKey }, () => renderEmailDetail(detail, ctx.out.paint));
  if (!isTerminal(detail)) {
    const why = waitingReason(detail);
    throw new RefusedError('wait_timeout', `email ${detail.id} is still ${detail.status} after ${opts.waitTimeout} s${why ? ` (${why})` : ''}`);
  }
  if (FAILED_FINAL.has(detail.status)) {
    throw new RefusedError(`email_${detail.status}`, `email ${detail.id} ended ${detail.status}`);
  }
}

/** Whether any field came from a prompt rather than a flag. */
function wasPrompted(opts: Options): boolean {
  const bodyFlag = [opts.text, opts.textFile, opts.html, opts.htmlFile].some((v) => v !== undefined);
  return opts.from === undefined || !opts.to || opts.to.length === 0 || opts.subject === undefined || !bodyFlag;
}

/**
 * The command to run again after a send that got no answer: the words as given, plus the answers
 * given at prompts and the generated idempotency key, so the server recognises the retry.
 */
function retryCommand(argv: string[], body: SendBody, opts: Options, generatedKey: string | undefined): string {
  const words = ['ravenctl', ...argv];
  if (opts.from === undefined) words.push('--from', body.from);
  if (!opts.to || opts.to.length === 0) for (const to of body.to) words.push('--to', to);
  if (opts.subject === undefined) words.push('--subject', body.subject);
  if (opts.text === undefined && opts.textFile === undefined && body.text !== undefined) words.push('--text', body.text);
  if (opts.html === undefined && opts.htmlFile === undefined && body.html !== undefined) words.push('--html', body.html);
  if (generatedKey !== undefined) words.push('--idempotency-key', generatedKey);
  return words.map(shellWord).join(' ');
}

function renderAdmission(ctx: RunContext, result: SendEmailResult): string {
  const paint = ctx.out.paint;
  return renderFields(
    [
      ['id', result.id],
      ['status', paint(statusStyle(result.status), result.status)],
      ['test_mode', 'test_mode' in result ? String(result.test_mode) : undefined],
      ['reason', 'reason' in result ? String(result.reason) : undefined],
    ],
    paint,
  );
}

type RavenClient = Awaited<ReturnType<RunContext['raven']>>['client'];

async function waitForFinal(
  ctx: RunContext,
  client: RavenClient,
  id: string,
  timeoutSeconds: number,
  isTerminal: (email: EmailDetail) => boolean,
): Promise<EmailDetail> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const spinner = ctx.out.spinner(`waiting for ${id}: queued`);
  let delay = 250;
  try {
    for (;;) {
      const detail = await client.emails.get(id);
      spinner.update(`waiting for ${id}: ${detail.status}`);
      if (isTerminal(detail) || Date.now() + delay > deadline) return detail;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 2000);
    }
  } finally {
    spinner.stop();
  }
}

async function dryRun(ctx: RunContext, body: SendBody, idempotencyKey: string): Promise<void> {
    const details = validateSendBody(body);
    if (!validIdempotencyKey(idempotencyKey)) {
      details.push({ field: 'Idempotency-Key', message: 'must be 1 to 128 printable ASCII characters, no space' });
    }
    if (details.length > 0) {
      throw new RefusedError('validation_error', `the request would be refused: ${details.length} problem${details.length === 1 ? '' : 's'}`, { details });
    }
    const target = await ctx.target();
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'Idempotency-Key': idempotencyKey,
    };
    if (target.apiKey) headers.Authorization = `Bearer ${redactKey(target.apiKey)}`;
    const request = { method: 'POST', url: `${target.baseUrl}/v1/emails`, headers, body };
    ctx.out.result({ dry_run: true, ...request, idempotency_key: idempotencyKey }, () =>
      [
        `${request.method} ${request.url}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        '',
        JSON.stringify(body, null, 2),
      ].join('\n'),
    );
    ctx.out.hint('dry run: nothing was sent');
}
