/** ravenctl relay projects pause [--project P]: Pause delivery of a project's mail (it keeps being admitted and waits). */
import type { Command } from 'commander';
import { adminAction, renderResource } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)');
  adminAction<{ project?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay projects pause', 'ravenctl relay projects pause --project prj_... --json'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const state = await (await admin()).projects.pauseDelivery(project);
      ctx.out.result(state, () => renderResource(state, ctx.out.paint));
    },
  );
}
