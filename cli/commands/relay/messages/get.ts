/** ravenctl relay messages get <id>: parsed headers, links, codes, text and html of a captured message. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderCapturedMessage } from '../../../render.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'captured message id (msg_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay messages get msg_...', 'ravenctl relay messages get msg_... --json | jq -r .text'] },
    async (ctx, admin, _opts, id) => {
      const message = await (await admin()).messages.get(id as string);
      ctx.out.result(message, () => renderCapturedMessage(message, ctx.out.paint));
    },
  );
}
