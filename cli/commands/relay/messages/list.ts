/** ravenctl relay messages list [--to A] [--project ID] [--limit N]: mail captured by the relay's SMTP sink. */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { parseIntegerOption } from '../../../help.js';

export function register(cmd: Command): void {
  cmd
    .option('--to <address>', 'only messages with this envelope recipient')
    .option('--project <id>', "only this project's messages (prj_...)")
    .option('--limit <n>', 'at most this many, newest first', parseIntegerOption('--limit', 1, 1000));
  adminAction<{ to?: string; project?: string; limit?: number; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay messages list', 'ravenctl relay messages list --to ada@example.test --limit 5 --json', 'ravenctl relay messages list --project prj_...'] },
    async (ctx, admin, opts) => {
      const query: { to?: string; project?: string; limit?: number } = {};
      if (opts.to !== undefined) query.to = opts.to;
      if (opts.project !== undefined) query.project = opts.project;
      if (opts.limit !== undefined) query.limit = opts.limit;
      const list = await (await admin()).messages.list(query);
      ctx.out.result(list, () =>
        renderList(
          list.messages,
          [
            { header: 'ID', value: (m) => m.id },
            // The header From: a relay delivery's envelope sender is a bounce address (bounce+em_...).
            { header: 'FROM', value: (m) => m.header_from ?? m.from, maxWidth: 30 },
            { header: 'TO', value: (m) => m.to.join(', '), maxWidth: 40 },
            { header: 'SUBJECT', value: (m) => m.subject ?? '', maxWidth: 40 },
            { header: 'SIZE', value: (m) => String(m.size) },
            // The checks badge; '-' until the relay has computed it (this listing queued it).
            { header: 'CHECKS', value: (m) => m.checks?.verdict ?? '-' },
            { header: 'RECEIVED', value: (m) => m.received_at },
          ],
          'No captured messages.',
          ctx.out.paint,
        ),
      );
    },
  );
}
