/** ravenctl relay webhooks enable <id>: send to the endpoint again, what waited first. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'webhook endpoint id (whk_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay webhooks enable whk_...'] },
    async (ctx, admin, _opts, id) => {
      const state = await (await admin()).webhooks.enable(id as string);
      ctx.out.result(state, () => `Webhook endpoint ${state.id} ${state.enabled ? 'enabled' : 'disabled'}`);
    },
  );
}
