/** ravenctl relay projects create --workspace W --name N --environment development|production */
import type { Command } from 'commander';
import type { Environment } from 'raven-email-sdk';
import { adminAction, renderResource } from '../../../admin.js';

const ENVIRONMENTS = ['development', 'production'] as const;

export function register(cmd: Command): void {
  cmd
    .option('--workspace <id>', 'workspace id (ws_...)')
    .option('--name <name>', 'project name')
    .option('--environment <env>', 'development (rr_test_ keys) or production (rr_live_ keys)');
  adminAction<{ workspace?: string; name?: string; environment?: Environment; adminToken?: string }>(
    cmd,
    {
      examples: [
        'ravenctl relay projects create --workspace ws_... --name web --environment development',
        'ravenctl relay projects create --workspace ws_... --name web-prod --environment production --json',
      ],
    },
    async (ctx, admin, opts) => {
      const workspace = await ctx.ask.text(opts.workspace, '--workspace', 'Workspace id');
      const name = await ctx.ask.text(opts.name, '--name', 'Project name');
      const environment = await ctx.ask.select(opts.environment, '--environment', 'Environment', ENVIRONMENTS);
      const project = await (await admin()).projects.create(workspace, { name, environment });
      ctx.out.result(project, () => renderResource(project, ctx.out.paint));
    },
  );
}
