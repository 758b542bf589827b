/** ravenctl relay workspaces list */
import type { Command } from 'commander';
import { adminAction, renderList, timestampOrDash } from '../../../admin.js';

export function register(cmd: Command): void {
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay workspaces list', 'ravenctl relay workspaces list --json'] },
    async (ctx, admin) => {
      const list = await (await admin()).workspaces.list();
      ctx.out.result(list, () =>
        renderList(
          list.workspaces,
          [
            { header: 'ID', value: (w) => w.id },
            { header: 'NAME', value: (w) => w.name },
            { header: 'ACTIVATED', value: (w) => (w.activated ? 'yes' : 'no'), style: (w) => (w.activated ? 'green' : undefined) },
            { header: 'CREATED', value: (w) => timestampOrDash(w.created_at) },
          ],
          'No workspaces.',
          ctx.out.paint,
        ),
      );
    },
  );
}
