/** ravenctl relay domains verify <id> [--force]: check DNS (or, for development, mark verified). */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { RefusedError } from '../../../errors.js';
import { renderDomain } from '../../../render.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'domain id (dom_...)').option('--force', 'mark verified without checking DNS (development)');
  adminAction<{ force?: boolean; adminToken?: string }>(
    cmd,
    {
      examples: ['ravenctl relay domains verify dom_...', 'ravenctl relay domains verify dom_... --force'],
      refused: ['domain_not_verified'],
    },
    async (ctx, admin, opts, id) => {
      const domain = await (await admin()).domains.verify(id as string, { force: opts.force === true });
      ctx.out.result(domain, () => renderDomain(domain, ctx.out.paint));
      if (domain.status !== 'verified') {
        throw new RefusedError('domain_not_verified', `domain ${domain.name} is not verified yet: publish the DNS records (each failed one says why) and retry`);
      }
    },
  );
}
