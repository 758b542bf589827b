/** ravenctl relay webhooks create --project P --url U --events a,b|* (the secret is shown once) */
import type { Command } from 'commander';
import type { CreateWebhookEndpointParams } from 'raven-email-sdk';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

export function register(cmd: Command): void {
  cmd
    .option('--project <id>', 'project id (prj_...)')
    .option('--url <url>', 'endpoint URL (https on port 443, unless the relay allows local webhooks)')
    .option('--events <list>', 'comma-separated event types (email.delivered,email.bounced) or * for all');
  adminAction<{ project?: string; url?: string; events?: string; adminToken?: string }>(
    cmd,
    {
      examples: [
        'ravenctl relay webhooks create --project prj_... --url https://example.com/hooks/raven --events "*"',
        'ravenctl relay webhooks create --project prj_... --url http://127.0.0.1:3000/hook --events email.delivered,email.bounced',
      ],
    },
    async (ctx, admin, opts) => {
      const project = await ctx.ask.text(opts.project, '--project', 'Project id');
      const url = await ctx.ask.text(opts.url, '--url', 'Endpoint URL');
      const raw = await ctx.ask.text(opts.events, '--events', 'Events (comma separated, * for all)');
      const events = raw.split(',').map((e) => e.trim()).filter((e) => e !== '') as CreateWebhookEndpointParams['events'];
      const endpoint = await (await admin()).webhooks.create(project, { url, events });
      ctx.out.result(endpoint, () =>
        renderFields(
          [
            ['ID', endpoint.id],
            ['URL', endpoint.url],
            ['Events', endpoint.events.join(', ')],
            ['Secret (shown once)', endpoint.secret],
          ],
          ctx.out.paint,
        ),
      );
    },
  );
}
