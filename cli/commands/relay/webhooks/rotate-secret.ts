/** ravenctl relay webhooks rotate-secret <id> [--overlap S]: a new signing secret, the old one signing beside it meanwhile. */
import { InvalidArgumentError, type Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

function parseOverlap(value: string): number {
  if (!/^\d{1,7}$/.test(value)) throw new InvalidArgumentError('--overlap must be a whole number of seconds (0 to 604800).');
  return Number(value);
}

export function register(cmd: Command): void {
  cmd
    .argument('<id>', 'webhook endpoint id (whk_...)')
    .option('--overlap <seconds>', 'how long the old secret keeps signing beside the new one (relay default: 86400, at most 604800)', parseOverlap);
  adminAction<{ overlap?: number; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay webhooks rotate-secret whk_...', 'ravenctl relay webhooks rotate-secret whk_... --overlap 3600 --json'] },
    async (ctx, admin, opts, id) => {
      const rotated = await (await admin()).webhooks.rotateSecret(id as string, opts.overlap === undefined ? {} : { overlap_seconds: opts.overlap });
      ctx.out.result(rotated, () =>
        renderFields(
          [
            ['ID', rotated.id],
            ['New secret (shown once)', rotated.secret],
          ],
          ctx.out.paint,
        ),
      );
    },
  );
}
