/**
 * ravenctl trigger <event type>: makes a real event of that type on the local relay (CONTRACT
 * section 11) by sending, with the API key, to the simulated address of that outcome (section 6)
 * from and to the first verified domain of the key's project, waits until the event is in the
 * email's timeline, and prints the email id ({"email_id","event_id","type"} with --json).
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { EVENT_TYPES, type EventType } from 'raven-email-sdk';
import { action, type RunContext } from '../context.js';
import { RefusedError, UsageError } from '../errors.js';
import { addHelp, AUTH_CODES } from '../help.js';

interface Options {
  project?: string;
  domain?: string;
  adminToken?: string;
  dataDir?: string;
}

/** The sink's simulated outcome (local part) that produces each event; queued and sent come with any. */
const LOCAL_PART: Record<EventType, string> = {
  'email.queued': 'delivered',
  'email.sent': 'delivered',
  'email.delivered': 'delivered',
  'email.delivery_delayed': 'delayed',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.failed': 'rejected',
  'email.delivery_unknown': 'unknown',
  // A hard bounce suppresses the address in the workspace: the next email to it is suppressed.
  'email.suppressed': 'bounced',
};

/** How long to wait for the event: a delayed delivery's event comes after the first attempt. */
const WAIT_MS = 60_000;
const POLL_MS = 200;

type Client = Awaited<ReturnType<RunContext['raven']>>['client'];

function parseType(value: string): EventType {
  if ((EVENT_TYPES as readonly string[]).includes(value)) return value as EventType;
  throw new UsageError(`unknown event type "${value}": use one of ${EVENT_TYPES.join(', ')}.`, 'unknown_event_type');
}

/**
 * The sender domain: --domain, else the first verified domain of the key's project (GET /v1/domains),
 * or of --project through the admin API (the key must belong to it, or the send says so).
 */
async function senderDomain(ctx: RunContext, client: Client, opts: Options): Promise<string> {
  const verified =
    opts.project === undefined
      ? (await client.domains.list()).domains.filter((d) => d.status === 'verified').map((d) => d.name)
      : (await (await ctx.admin(opts)).domains.list(opts.project)).domains.filter((d) => d.status === 'verified').map((d) => d.name);
  if (opts.domain !== undefined) {
    const named = verified.find((name) => name.toLowerCase() === opts.domain!.toLowerCase());
    if (!named) throw new UsageError(`--domain ${opts.domain} is not a verified domain of the project.`);
    return named;
  }
  if (verified.length === 0) throw new RefusedError('domain_not_verified', 'the project has no verified domain to send from and to.');
  return verified[0]!;
}

/** Waits until the email's timeline has an event of the type; its id. */
async function waitForEvent(client: Client, emailId: string, type: EventType): Promise<string> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const email = await client.emails.get(emailId);
    const event = email.events.find((e) => e.type === type);
    if (event) return event.id;
    if (Date.now() > deadline) {
      throw new RefusedError('event_not_seen', `no ${type} event on ${emailId} after ${WAIT_MS / 1000} s (status ${email.status}); simulated outcomes need the relay's sink provider.`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function send(client: Client, domain: string, to: string, type: EventType): Promise<string> {
  const sent = await client.emails.send({
    from: `Raven trigger <trigger@${domain}>`,
    to,
    subject: `ravenctl trigger ${type}`,
    text: `A test email sent by ravenctl trigger to produce an ${type} event.`,
  });
  return sent.id;
}

async function trigger(ctx: RunContext, rawType: string, opts: Options): Promise<void> {
  const type = parseType(rawType);
  const { client } = await ctx.raven();
  const domain = await senderDomain(ctx, client, opts);
  const to = `${LOCAL_PART[type]}+${randomBytes(6).toString('hex')}@${domain}`;
  let emailId = await send(client, domain, to, type);
  if (type === 'email.suppressed') {
    await waitForEvent(client, emailId, 'email.bounced');
    emailId = await send(client, domain, to, type);
  }
  const eventId = await waitForEvent(client, emailId, type);
  ctx.out.result({ email_id: emailId, event_id: eventId, type }, () => emailId);
}

export function register(cmd: Command): void {
  cmd
    .argument('<event-type>', `the event to produce: ${EVENT_TYPES.join(', ')}`)
    .option('--project <id>', "the key's project (prj_...): its domains are read with the admin token")
    .option('--admin-token <token>', 'admin token, for --project (default: RAVEN_ADMIN_TOKEN, else the data directory)')
    .option('--data-dir <dir>', 'the local relay\'s data directory, where its admin token is (default ./.raven)')
    .option('--domain <name>', 'send from and to this verified domain of the project (default: the first)')
    .action(action<Options>(async (ctx, opts, type) => trigger(ctx, type as string, opts)));
  addHelp(cmd, {
    examples: ['ravenctl trigger email.bounced', 'ravenctl trigger email.delivered --json', 'ravenctl trigger email.suppressed --domain example.test'],
    refused: [...AUTH_CODES, 'domain_not_verified', 'rate_limit_exceeded', 'quota_exceeded'],
    usage: ['missing_api_key', 'unknown_event_type'],
  });
}
