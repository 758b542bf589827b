/** ravenctl relay emails retry <id> [--confirm-unknown]: try the delayed recipients again now. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd
    .argument('<id>', 'email id (em_...)')
    .option('--confirm-unknown', 'also resend delivery_unknown recipients, knowing the message may be delivered twice');
  adminAction<{ confirmUnknown?: boolean; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay emails retry em_...', 'ravenctl relay emails retry em_... --confirm-unknown --json'], refused: ['conflict'] },
    async (ctx, admin, opts, id) => {
      const result = await (await admin()).emails.retry(id as string, opts.confirmUnknown ? { confirm_unknown: true } : {});
      ctx.out.result(result, () => `Retrying ${result.recipients.join(', ')} now`);
    },
  );
}
