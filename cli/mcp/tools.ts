/**
 * The tools `ravenctl mcp` offers an agent (CONTRACT section 10): send and read the API's emails,
 * search, read and wait for the relay's captured mail, delete it. Each tool has a JSON Schema for
 * its input (from zod) and a description that says when to use it; each result is compact JSON:
 * no bodies unless asked for, links and codes always. A failure is a tool error saying what to do,
 * never a crash of the server.
 */
import type { CapturedMessage, InboxEntry, Raven, RavenAdmin } from 'raven-email-sdk';
import { z } from 'zod';

/** Builds the clients on first use, so a missing token is a tool error, not a failed start. */
export interface McpClients {
  admin(): Promise<RavenAdmin>;
  raven(): Promise<Raven>;
  baseUrl(): Promise<string>;
}

const recipients = z.union([z.string(), z.array(z.string()).min(1)]);
const waitArgs = {
  to: z.string().min(1).optional().describe('An envelope recipient (exact address, case-insensitive).'),
  subject: z.string().min(1).optional().describe('A part of the subject (case-insensitive).'),
  project: z.string().min(1).optional().describe('Only messages of this project (prj_...).'),
  after: z.string().min(1).optional().describe('A captured message id: only messages captured after it (use the id of the last message you saw).'),
  timeout: z.number().int().min(1).max(120).optional().describe('Seconds to wait, 1-120 (default 30).'),
};
const bodyArgs = {
  include_text: z.boolean().optional().describe('Also return the plain-text body (default false).'),
  include_html: z.boolean().optional().describe('Also return the HTML body (default false).'),
};

/** A captured message as an agent needs it: who, what, links and codes; bodies only when asked. */
function compactMessage(m: CapturedMessage, bodies: { include_text?: boolean | undefined; include_html?: boolean | undefined } = {}) {
  return {
    id: m.id,
    from: m.header_from ?? m.from,
    to: m.to,
    subject: m.subject,
    received_at: m.received_at,
    project_id: m.project_id,
    email_id: m.email_id,
    links: m.links,
    codes: m.codes,
    attachments: m.attachments.map((a) => a.filename),
    ...(bodies.include_text ? { text: m.text } : {}),
    ...(bodies.include_html ? { html: m.html } : {}),
  };
}

function compactEntry(e: InboxEntry) {
  return { id: e.id, from: e.from_address, to: e.to, subject: e.subject, snippet: e.snippet, received_at: e.received_at, read: e.read, project_id: e.project_id };
}

export interface ToolDefinition<Shape extends z.ZodRawShape> {
  name: string;
  description: string;
  inputSchema: Shape;
  run(args: z.infer<z.ZodObject<Shape>>, clients: McpClients): Promise<unknown>;
}

const tool = <Shape extends z.ZodRawShape>(definition: ToolDefinition<Shape>) => definition;

export const TOOLS = [
  tool({
    name: 'send_email',
    description:
      "Send an email through the relay's API (POST /v1/emails) with the configured API key. `from` must be on a verified domain of the key's project; a development key (rr_test_) only sends to that project's verified domains. Returns the email id and status; on the local relay the message is then captured: use wait_for_message to read it.",
    inputSchema: {
      from: z.string().min(1).describe('Sender: address or "Name <address>".'),
      to: recipients.describe('One address or a list.'),
      subject: z.string().min(1).max(998),
      text: z.string().optional().describe('Plain-text body (text or html is required).'),
      html: z.string().optional().describe('HTML body.'),
      cc: recipients.optional(),
      bcc: recipients.optional(),
      reply_to: z.string().optional(),
      tags: z.record(z.string(), z.string()).optional().describe('Up to 20 ASCII tags, name -> value.'),
    },
    async run(args, clients) {
      const raven = await clients.raven();
      return raven.emails.send(args as Parameters<Raven['emails']['send']>[0]);
    },
  }),
  tool({
    name: 'list_emails',
    description: "List the emails sent through the API (newest first) that the API key may read, with their status. Use get_email for one email's recipients and event timeline.",
    inputSchema: {
      status: z.string().optional().describe('queued, suppressed, sent, delivered, bounced, failed or delivery_unknown.'),
      recipient: z.string().optional().describe('Only emails with this To address.'),
      limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 20).'),
    },
    async run(args, clients) {
      const raven = await clients.raven();
      const page = await raven.emails.list({ ...args, limit: args.limit ?? 20 } as Parameters<Raven['emails']['list']>[0]);
      return { emails: page.emails, next_cursor: page.next_cursor };
    },
  }),
  tool({
    name: 'get_email',
    description: 'One email sent through the API: its recipients and their delivery status, and its event timeline (queued, delivered, bounced...).',
    inputSchema: { id: z.string().min(1).describe('The email id (em_...).') },
    async run(args, clients) {
      return (await clients.raven()).emails.get(args.id);
    },
  }),
  tool({
    name: 'search_inbox',
    description:
      'Search the mail the relay captured (its inbox), newest first. The query takes free text and terms: from:, to:, subject:, is:unread, is:read, has:attachment, before:/after: (YYYY-MM-DD), larger:/smaller: (10k, 2M), project:; a - before a term negates it; quote values with spaces (subject:"weekly report"). Returns summaries; read one with read_message.',
    inputSchema: {
      query: z.string().max(500).optional().describe('Free text and terms; empty lists everything.'),
      project: z.string().min(1).optional().describe('Only messages of this project (prj_...).'),
      limit: z.number().int().min(1).max(200).optional().describe('At most this many (default 20).'),
    },
    async run(args, clients) {
      const page = await (await clients.admin()).messages.search({ q: args.query, project: args.project, limit: args.limit ?? 20 });
      return { messages: page.messages.map(compactEntry), unread: page.unread, next_cursor: page.next_cursor };
    },
  }),
  tool({
    name: 'read_message',
    description: "Read one captured message: sender, recipients, subject, its links (to follow, e.g. a confirmation link) and one-time codes. Bodies only when asked.",
    inputSchema: { id: z.string().min(1).describe('The captured message id (msg_...).'), ...bodyArgs },
    async run(args, clients) {
      return compactMessage(await (await clients.admin()).messages.get(args.id), args);
    },
  }),
  tool({
    name: 'wait_for_message',
    description:
      'Wait until the relay captures a matching message and return it with its links and one-time codes: at once when one already matches (the newest), else as soon as one arrives. Use it after an action that sends mail (a sign-up, a password reset); pass `after` to skip messages you already saw. Fails with wait_timeout when none comes in time.',
    inputSchema: { ...waitArgs, ...bodyArgs },
    async run(args, clients) {
      const { include_text, include_html, ...query } = args;
      return compactMessage(await (await clients.admin()).messages.wait(query), { include_text, include_html });
    },
  }),
  tool({
    name: 'delete_messages',
    description: 'Delete captured mail: one message by id, or every captured message when no id is given (a clean inbox before a test).',
    inputSchema: { id: z.string().min(1).optional().describe('The captured message id; leave it out to delete all.') },
    async run(args, clients) {
      const admin = await clients.admin();
      if (args.id !== undefined) await admin.messages.delete(args.id);
      else await admin.messages.clear();
      return { deleted: args.id ?? 'all' };
    },
  }),
];
