/** ravenctl relay webhooks list --project P */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)');
  adminAction<{ project?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay webhooks list --project prj_...'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const list = await (await admin()).webhooks.list(project);
      ctx.out.result(list, () =>
        renderList(
          list.webhooks,
          [
            { header: 'ID', value: (w) => w.id },
            { header: 'URL', value: (w) => w.url },
            { header: 'EVENTS', value: (w) => w.events.join(','), maxWidth: 50 },
            { header: 'STATE', value: (w) => (w.enabled ? 'enabled' : 'disabled'), style: (w) => (w.enabled ? 'green' : 'yellow') },
            { header: 'CREATED', value: (w) => w.created_at },
          ],
          'No webhook endpoints.',
          ctx.out.paint,
        ),
      );
    },
  );
}
