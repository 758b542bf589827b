/** ravenctl relay webhooks delete <id> */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'webhook endpoint id (whk_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay webhooks delete whk_...'] },
    async (ctx, admin, _opts, id) => {
      await (await admin()).webhooks.delete(id as string);
      ctx.out.result({ id, deleted: true }, () => `Deleted webhook endpoint ${id}`);
    },
  );
}
