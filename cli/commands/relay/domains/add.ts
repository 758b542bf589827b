/** ravenctl relay domains add --project P --name example.com: prints the DNS records to publish. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { chooseProject } from '../../../relay-scope.js';
import { renderDomain } from '../../../render.js';

export function register(cmd: Command): void {
  cmd.option('--project <id>', 'project id, prj_... (default: the only project)').option('--name <domain>', 'sender domain, e.g. mail.example.com');
  adminAction<{ project?: string; name?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay domains add --project prj_... --name example.com'] },
    async (ctx, admin, opts) => {
      const project = await chooseProject(ctx, admin, opts.project);
      const name = await ctx.ask.text(opts.name, '--name', 'Domain name');
      const domain = await (await admin()).domains.create(project, { name });
      ctx.out.result(domain, () => renderDomain(domain, ctx.out.paint));
      ctx.out.hint(`publish the records above, then run: ravenctl relay domains verify ${domain.id}`);
    },
  );
}
