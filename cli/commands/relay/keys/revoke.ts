/** ravenctl relay keys revoke <id> */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'key id (key_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay keys revoke key_...'] },
    async (ctx, admin, _opts, id) => {
      await (await admin()).keys.revoke(id as string);
      ctx.out.result({ id, revoked: true }, () => `Revoked key ${id}`);
    },
  );
}
