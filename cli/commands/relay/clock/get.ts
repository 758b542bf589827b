/** ravenctl relay clock get: the relay's test clock (relay started with --test-clock). */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

export function register(cmd: Command): void {
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay clock get', 'ravenctl relay clock get --json'] },
    async (ctx, admin) => {
      const clock = await (await admin()).clock.get();
      ctx.out.result(clock, () => renderFields([['Now', clock.now], ['Unix', String(clock.unix)]], ctx.out.paint));
    },
  );
}
