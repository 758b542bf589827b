/**
 * ravenctl relay messages wait [--to A] [--subject S] [--project ID] [--after ID] [--timeout S]
 * [--extract link|code]: waits for a captured message (CONTRACT section 10) and prints it, or only
 * its first link or code, so a shell test reads `LINK=$(ravenctl relay messages wait --to ... --extract link)`.
 * Exit 0 when a message came (with what --extract asked for), 1 otherwise.
 */
import { Option, type Command } from 'commander';
import type { WaitForMessageQuery } from 'raven-email-sdk';
import { adminAction } from '../../../admin.js';
import { RefusedError } from '../../../errors.js';
import { parseIntegerOption } from '../../../help.js';
import { renderCapturedMessage } from '../../../render.js';

interface WaitOptions extends Omit<WaitForMessageQuery, 'timeout'> {
  timeout?: number;
  extract?: 'link' | 'code';
  adminToken?: string;
}

export function register(cmd: Command): void {
  cmd
    .option('--to <address>', 'an envelope recipient (case-insensitive)')
    .option('--subject <text>', 'a part of the subject (case-insensitive)')
    .option('--project <id>', "only this project's messages (prj_...)")
    .option('--after <id>', 'only messages captured after this one (msg_...)')
    .option('--timeout <seconds>', 'how long to wait, 1-120 (default 30)', parseIntegerOption('--timeout', 1, 120))
    .addOption(new Option('--extract <what>', 'print only the first link URL or the first one-time code').choices(['link', 'code']));
  adminAction<WaitOptions>(
    cmd,
    {
      examples: [
        'ravenctl relay messages wait --to ada@example.test',
        'LINK=$(ravenctl relay messages wait --to ada@example.test --subject "Confirm" --extract link)',
        'ravenctl relay messages wait --project prj_... --after msg_... --timeout 60 --json',
      ],
      refused: ['wait_timeout', 'nothing_to_extract'],
    },
    async (ctx, admin, opts) => {
      const query: WaitForMessageQuery = {};
      for (const key of ['to', 'subject', 'project', 'after', 'timeout'] as const) {
        if (opts[key] !== undefined) Object.assign(query, { [key]: opts[key] });
      }
      const message = await (await admin()).messages.wait(query);
      if (opts.extract === undefined) {
        ctx.out.result(message, () => renderCapturedMessage(message, ctx.out.paint));
        return;
      }
      const value = opts.extract === 'link' ? message.links[0]?.url : message.codes[0];
      if (value === undefined) {
        throw new RefusedError('nothing_to_extract', `Message ${message.id} came, but it has no ${opts.extract === 'link' ? 'http(s) link' : 'one-time code'}.`);
      }
      // Alone on stdout, JSON mode or not: it is meant for $(...).
      ctx.out.stdout.write(`${value}\n`);
    },
  );
}
