/** ravenctl relay domains list --project P */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';
import { statusStyle } from '../../../output.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)');
  adminAction<{ project?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay domains list --project prj_...'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const list = await (await admin()).domains.list(project);
      ctx.out.result(list, () =>
        renderList(
          list.domains,
          [
            { header: 'ID', value: (d) => d.id },
            { header: 'NAME', value: (d) => d.name },
            { header: 'STATUS', value: (d) => d.status, style: (d) => statusStyle(d.status === 'verified' ? 'delivered' : 'queued') },
            { header: 'VERIFIED', value: (d) => d.verified_at ?? '-' },
          ],
          'No domains.',
          ctx.out.paint,
        ),
      );
    },
  );
}
