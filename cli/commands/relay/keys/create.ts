/** ravenctl relay keys create --project P --name N --permission email:send|email:read */
import type { Command } from 'commander';
import type { Permission } from 'raven-email-sdk';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

const PERMISSIONS = ['email:send', 'email:read'] as const;

export function register(cmd: Command): void {
  cmd
    .option('--project <id>', 'project id (prj_...)')
    .option('--name <name>', 'key name')
    .option('--permission <permission>', 'email:send (send, read own emails) or email:read (read the project)');
  adminAction<{ project?: string; name?: string; permission?: Permission; adminToken?: string }>(
    cmd,
    {
      examples: [
        'ravenctl relay keys create --project prj_... --name backend --permission email:send',
        'ravenctl relay keys create --project prj_... --name dashboard --permission email:read --json | jq -r .key',
      ],
    },
    async (ctx, admin, opts) => {
      const project = await ctx.ask.text(opts.project, '--project', 'Project id');
      const name = await ctx.ask.text(opts.name, '--name', 'Key name');
      const permission = await ctx.ask.select(opts.permission, '--permission', 'Permission', PERMISSIONS);
      const key = await (await admin()).keys.create(project, { name, permission });
      // The secret is shown once, here, in full: it cannot be read again.
      ctx.out.result(key, () =>
        renderFields(
          [
            ['ID', key.id],
            ['Name', key.name],
            ['Permission', key.permission],
            ['Project', key.project_id],
            ['Key (shown once)', key.key],
          ],
          ctx.out.paint,
        ),
      );
      ctx.out.hint('store the key server-side now; it is not shown again');
    },
  );
}
