/** ravenctl relay webhooks deliveries <id>: delivery attempts, newest first (--json adds the first 1 KB of each answer). */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'webhook endpoint id (whk_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay webhooks deliveries whk_...', 'ravenctl relay webhooks deliveries whk_... --json'] },
    async (ctx, admin, _opts, id) => {
      const list = await (await admin()).webhooks.deliveries(id as string);
      ctx.out.result(list, () =>
        renderList(
          list.deliveries,
          [
            { header: 'EVENT', value: (d) => d.event_id },
            { header: 'TYPE', value: (d) => d.event_type },
            { header: 'ATTEMPT', value: (d) => String(d.attempt) },
            {
              header: 'RESULT',
              value: (d) => (d.status_code !== null ? String(d.status_code) : (d.error ?? '-')),
              style: (d) => (d.status_code !== null && d.status_code >= 200 && d.status_code < 300 ? 'green' : 'red'),
              maxWidth: 40,
            },
            { header: 'TOOK', value: (d) => (d.duration_ms === null ? '-' : `${d.duration_ms} ms`) },
            { header: 'AT', value: (d) => d.attempted_at },
            { header: 'NEXT', value: (d) => d.next_attempt_at ?? '-' },
          ],
          'No deliveries yet.',
          ctx.out.paint,
        ),
      );
    },
  );
}
