/** ravenctl emails list: a page of emails (or all of them), newest first. */
import { Option, type Command } from 'commander';
import { EMAIL_STATUSES, type EmailListQuery, type EmailStatus, type EmailSummary } from 'raven-email-sdk';
import { action } from '../../context.js';
import { addHelp, AUTH_CODES, parseIntegerOption } from '../../help.js';
import { renderEmailList } from '../../render.js';

interface Options {
  status?: EmailStatus;
  recipient?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}


export function register(cmd: Command): void {
  cmd
    .addOption(new Option('--status <status>', 'only emails in this status').choices(EMAIL_STATUSES))
    .option('--recipient <address>', 'only emails with this To address')
    .option('--limit <n>', 'page size, 1 to 100 (server default 50)', parseIntegerOption('--limit', 1, 100))
    .option('--cursor <cursor>', 'continue from the next_cursor of a previous page')
    .addOption(new Option('--all', 'follow next_cursor to the last page').conflicts('cursor'))
    .action(
      action<Options>(async (ctx, opts) => {
        const { client } = await ctx.raven();
        const query: EmailListQuery = {};
        if (opts.status !== undefined) query.status = opts.status;
        if (opts.recipient !== undefined) query.recipient = opts.recipient;
        if (opts.limit !== undefined) query.limit = opts.limit;
        if (opts.cursor !== undefined) query.cursor = opts.cursor;

        let emails: EmailSummary[];
        let nextCursor: string | null;
        if (opts.all) {
          emails = [];
          for await (const email of client.emails.list(query)) emails.push(email);
          nextCursor = null;
        } else {
          const page = await client.emails.list(query);
          emails = page.emails;
          nextCursor = page.next_cursor ?? null;
        }

        ctx.out.result({ emails, next_cursor: nextCursor }, () => renderEmailList(emails, ctx.out.paint));
        if (nextCursor !== null) ctx.out.hint(`more: ${nextPageCommand(opts, nextCursor)}`);
      }),
    );
  addHelp(cmd, {
    examples: [
      'ravenctl emails list',
      'ravenctl emails list --status delivered --limit 20',
      'ravenctl emails list --recipient ada@example.test --all --json',
      'ravenctl emails list --cursor <next_cursor>',
    ],
    refused: [...AUTH_CODES, 'validation_error', 'rate_limit_exceeded', 'internal_error'],
    usage: ['missing_api_key'],
  });
}

function quote(value: string): string {
  return /^[A-Za-z0-9@._:=+\-/]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function nextPageCommand(opts: Options, cursor: string): string {
  const parts = ['ravenctl emails list'];
  if (opts.status) parts.push(`--status ${opts.status}`);
  if (opts.recipient) parts.push(`--recipient ${quote(opts.recipient)}`);
  if (opts.limit !== undefined) parts.push(`--limit ${opts.limit}`);
  parts.push(`--cursor ${quote(cursor)}`);
  return parts.join(' ');
}
