/** ravenctl relay workspaces activate [id]: allow rr_live_ keys (production) in the workspace. */
import type { Command } from 'commander';
import { adminAction, renderResource } from '../../../admin.js';
import { chooseWorkspace } from '../../../relay-scope.js';

export function register(cmd: Command): void {
  cmd.argument('[id]', 'workspace id, ws_... (default: the only workspace)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay workspaces activate', 'ravenctl relay workspaces activate ws_01JDQ4ZK5W9M2V3XG7H8TQ1B6N'] },
    async (ctx, admin, _opts, id) => {
      const workspaceId = await chooseWorkspace(ctx, admin, id as string | undefined, 'the workspace id (an argument)');
      const workspace = await (await admin()).workspaces.activate(workspaceId);
      ctx.out.result(workspace, () => renderResource(workspace, ctx.out.paint));
    },
  );
}
