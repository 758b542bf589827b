/**
 * ravenctl relay webhooks recover <id> --since T [--until T] [--dry-run] [--yes]: send the endpoint's
 * failed deliveries again (one more attempt each), after showing how many and asking to confirm.
 */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { UsageError } from '../../../errors.js';

const plural = (n: number) => `${n} failed ${n === 1 ? 'delivery' : 'deliveries'}`;

export function register(cmd: Command): void {
  cmd
    .argument('<id>', 'webhook endpoint id (whk_...)')
    .requiredOption('--since <time>', 'events from this time (ISO 8601 with a zone, e.g. 2026-11-27T09:00:00Z)')
    .option('--until <time>', 'events before this time (default: now, on the relay clock)')
    .option('--dry-run', 'only count the failed deliveries; send nothing')
    .option('--yes', 'send them without asking (needed when nobody can answer: --json, CI, no terminal)');
  adminAction<{ since: string; until?: string; dryRun?: boolean; yes?: boolean; adminToken?: string }>(
    cmd,
    {
      examples: [
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z',
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z --dry-run --json',
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z --until 2026-11-27T11:00:00Z --yes --json',
      ],
    },
    async (ctx, admin, opts, id) => {
      const client = await admin();
      const window = { since: opts.since, ...(opts.until === undefined ? {} : { until: opts.until }) };
      const send = async () => {
        const done = await client.webhooks.recover(id as string, window);
        ctx.out.result(done, () => `${plural(done.count)} of ${done.id} since ${done.since} sent again.`);
      };
      if (opts.yes && !opts.dryRun) return send();
      const counted = await client.webhooks.recover(id as string, { ...window, dry_run: true });
      const what = `${plural(counted.count)} of ${counted.id} between ${counted.since} and ${counted.until}`;
      if (opts.dryRun || counted.count === 0) {
        ctx.out.result(counted, () => (counted.count === 0 ? `No failed delivery of ${counted.id} between ${counted.since} and ${counted.until}: nothing to send.` : `${what} would be sent again.`));
        return;
      }
      if (!ctx.ask.interactive) {
        throw new UsageError(`${what} would be sent again: pass --yes to send them (or --dry-run to only count)`, 'missing_option');
      }
      if (!(await ctx.ask.confirm(`Send ${what} again?`, false))) {
        ctx.out.hint('Nothing sent.');
        return;
      }
      await send();
    },
  );
}
