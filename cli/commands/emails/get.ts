/** ravenctl emails get <id>: one email, its recipient outcomes and its event timeline. */
import type { Command } from 'commander';
import { action } from '../../context.js';
import { addHelp, AUTH_CODES } from '../../help.js';
import { renderEmailDetail } from '../../render.js';

export function register(cmd: Command): void {
  cmd
    .argument('<id>', 'email id (em_...)')
    .action(
      action<Record<string, never>>(async (ctx, _opts, id) => {
        const { client } = await ctx.raven();
        const email = await client.emails.get(id as string);
        ctx.out.result(email, () => renderEmailDetail(email, ctx.out.paint));
      }),
    );
  addHelp(cmd, {
    examples: ['ravenctl emails get em_01JDQ4ZK5W9M2V3XG7H8TQ1B6N', 'ravenctl emails get em_01JDQ4ZK5W9M2V3XG7H8TQ1B6N --json | jq .recipients'],
    refused: [...AUTH_CODES, 'not_found', 'rate_limit_exceeded', 'internal_error'],
    usage: ['missing_api_key'],
  });
}
