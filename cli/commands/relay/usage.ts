/** ravenctl relay usage --workspace W: accepted recipients this UTC month. */
import type { Command } from 'commander';
import { adminAction } from '../../admin.js';
import { chooseWorkspace } from '../../relay-scope.js';
import { renderFields, renderTable } from '../../output.js';

/** `7 of 5,000 recipients (0.1%)`: quotas count accepted recipients (To, Cc and Bcc), not emails. */
function recipients(used: number, limit: number | null | undefined): string {
  const count = (n: number) => n.toLocaleString('en-US');
  if (limit === null || limit === undefined) return `${count(used)} recipients (no limit)`;
  const share = limit > 0 ? ` (${((used / limit) * 100).toFixed(1)}%)` : '';
  return `${count(used)} of ${count(limit)} recipients${share}`;
}

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
              ['Month', `${usage.month} (UTC)`],
              ['Workspace', recipients(usage.workspace.used, usage.workspace.limit)],
            ],
            paint,
          ),
          ...(usage.keys.length > 0
            ? [
                '',
                renderTable(
                  [
                    { header: 'KEY', value: (k: (typeof usage.keys)[number]) => k.id },
                    { header: 'RECIPIENTS USED', value: (k) => recipients(k.used, k.limit) },
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
