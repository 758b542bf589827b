/** ravenctl relay projects resume [--project P]: Resume delivery of a project's mail. */
import type { Command } from 'commander';
import { adminAction, renderResource } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)');
  adminAction<{ project?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay projects resume', 'ravenctl relay projects resume --project prj_... --json'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const state = await (await admin()).projects.resumeDelivery(project);
      ctx.out.result(state, () => renderResource(state, ctx.out.paint));
    },
  );
}
