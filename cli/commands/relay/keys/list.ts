/** ravenctl relay keys list --project P (keys are shown redacted) */
import type { Command } from 'commander';
import { adminAction, renderList } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)');
  adminAction<{ project?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay keys list --project prj_...'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const list = await (await admin()).keys.list(project);
      ctx.out.result(list, () =>
        renderList(
          list.keys,
          [
            { header: 'ID', value: (k) => k.id },
            { header: 'NAME', value: (k) => k.name },
            { header: 'KEY', value: (k) => k.redacted },
            { header: 'PERMISSION', value: (k) => k.permission },
            { header: 'LAST USED', value: (k) => k.last_used_at ?? 'never' },
            { header: 'REVOKED', value: (k) => k.revoked_at ?? '-', style: (k) => (k.revoked_at ? 'red' : undefined) },
          ],
          'No keys.',
          ctx.out.paint,
        ),
      );
    },
  );
}
