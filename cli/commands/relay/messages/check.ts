/** ravenctl relay messages check <id>: does a captured message authenticate, render, link and pass a spam filter. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderMessageChecks } from '../../../render.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'captured message id (msg_...)');
  cmd.option('--no-links', 'list the links without checking them');
  adminAction<{ adminToken?: string; links: boolean }>(
    cmd,
    { examples: ['ravenctl relay messages check msg_...', 'ravenctl relay messages check msg_... --json | jq .authentication.dkim'] },
    async (ctx, admin, opts, id) => {
      const checks = await (await admin()).messages.checks(id as string, { links: opts.links });
      ctx.out.result(checks, () => renderMessageChecks(checks, ctx.out.paint));
    },
  );
}
