/**
 * ravenctl relay webhooks recover <id> --since T [--until T] [--dry-run] [--yes]: send the endpoint's
 * failed deliveries again (one more attempt each), after showing how many and asking to confirm.
 * T is ISO 8601 or a time ago (`2h`) on the relay's clock (cli/past-time.ts).
 */
import type { Command } from 'commander';
import { adminAction, type AdminClient } from '../../../admin.js';
import type { RunContext } from '../../../context.js';
import { toCliError, UsageError } from '../../../errors.js';
import { isTimeAgo, parsePastTime, PAST_TIME_FORMS, resolvePastTime, type PastTime } from '../../../past-time.js';

const plural = (n: number) => `${n} failed ${n === 1 ? 'delivery' : 'deliveries'}`;

/** Now on the relay's clock: its test clock when it has one (GET /admin/v1/clock), else this machine's. */
async function relayNowMs(ctx: RunContext, client: AdminClient): Promise<number> {
  try {
    return Date.parse((await client.clock.get()).now);
  } catch (error) {
    const failure = toCliError(error, await ctx.sdk());
    if (failure.status === 404) return Date.now();
    throw failure;
  }
}

export function register(cmd: Command): void {
  cmd
    .argument('<id>', 'webhook endpoint id (whk_...)')
    .requiredOption('--since <time>', `events from this time: ${PAST_TIME_FORMS}, on the relay's clock`, parsePastTime)
    .option('--until <time>', 'events before this time, in the same forms (default: now, on the relay clock)', parsePastTime)
    .option('--dry-run', 'only count the failed deliveries; send nothing')
    .option('--yes', 'send them without asking (needed when nobody can answer: --json, CI, no terminal)');
  adminAction<{ since: PastTime; until?: PastTime; dryRun?: boolean; yes?: boolean; adminToken?: string }>(
    cmd,
    {
      examples: [
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z',
        'ravenctl relay webhooks recover whk_... --since 2h --dry-run',
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z --dry-run --json',
        'ravenctl relay webhooks recover whk_... --since 2026-11-27T09:00:00Z --until 2026-11-27T11:00:00Z --yes --json',
      ],
    },
    async (ctx, admin, opts, id) => {
      const client = await admin();
      const nowMs = isTimeAgo(opts.since) || isTimeAgo(opts.until) ? await relayNowMs(ctx, client) : 0;
      const since = resolvePastTime(opts.since, nowMs, '--since');
      const window = { since, ...(opts.until === undefined ? {} : { until: resolvePastTime(opts.until, nowMs, '--until') }) };
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
