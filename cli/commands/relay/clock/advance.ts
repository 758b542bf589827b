/** ravenctl relay clock advance <seconds>: move the test clock forward (rate windows, retries, ...). */
import { InvalidArgumentError, type Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

function parseSeconds(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('seconds must be a positive whole number.');
  return value;
}

export function register(cmd: Command): void {
  cmd.argument('<seconds>', 'how far to move the clock', parseSeconds);
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay clock advance 3600', 'ravenctl relay clock advance 86400 --json'] },
    async (ctx, admin, _opts, seconds) => {
      const clock = await (await admin()).clock.advance(Number(seconds));
      ctx.out.result(clock, () => renderFields([['Now', clock.now], ['Unix', String(clock.unix)]], ctx.out.paint));
    },
  );
}
