/** ravenctl relay usage --workspace W: accepted recipients this UTC month. */
import type { Command } from 'commander';
import { adminAction } from '../../admin.js';
import { chooseWorkspace } from '../../relay-scope.js';
import { renderFields, renderTable } from '../../output.js';

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)');
  adminAction<{ workspace?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay usage --workspace ws_...', 'ravenctl relay usage --workspace ws_... --json'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const usage = await (await admin()).usage(workspace);
      const paint = ctx.out.paint;
      ctx.out.result(usage, () =>
        [
          renderFields(
            [
              ['Month', usage.month],
              ['Workspace', `${usage.workspace.used} / ${usage.workspace.limit}`],
            ],
            paint,
          ),
          ...(usage.keys.length > 0
            ? [
                '',
                renderTable(
                  [
                    { header: 'KEY', value: (k: (typeof usage.keys)[number]) => k.id },
                    { header: 'USED', value: (k) => String(k.used) },
                    { header: 'LIMIT', value: (k) => (k.limit === null || k.limit === undefined ? '-' : String(k.limit)) },
                  ],
                  usage.keys,
                  paint,
                ),
              ]
            : []),
        ].join('\n'),
      );
    },
  );
}
