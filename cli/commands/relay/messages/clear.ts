/** ravenctl relay messages clear: delete every captured message. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay messages clear'] },
    async (ctx, admin) => {
      await (await admin()).messages.clear();
      ctx.out.result({ cleared: true }, () => 'Cleared captured messages');
    },
  );
}
