/** ravenctl relay emails attempts <id>: every delivery attempt of an email, with its SMTP conversation. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderAttempts } from '../../../render.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'email id (em_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay emails attempts em_...', 'ravenctl relay emails attempts em_... --json | jq .attempts[0].reply'] },
    async (ctx, admin, _opts, id) => {
      const list = await (await admin()).emails.attempts(id as string);
      ctx.out.result(list, () => renderAttempts(list.attempts, ctx.out.paint));
    },
  );
}
