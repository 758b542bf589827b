/** ravenctl relay reputation --workspace W: bounce and complaint rates over 1, 7 and 30 days, with their levels. */
import type { Command } from 'commander';
import type { ReputationWindow } from 'raven-email-sdk';
import { adminAction } from '../../admin.js';
import { chooseWorkspace } from '../../relay-scope.js';
import { renderTable, type Style } from '../../output.js';

type Level = ReputationWindow['bounce_level'];
type Row = ReputationWindow & { scope: string };

const LEVEL_STYLE: Record<Level, Style> = { ok: 'green', review: 'yellow', at_risk: 'red' };
const level = (l: Level) => l.replace('_', ' ');
/** `1 (50.0%)`; two decimals below 1 %, where the complaint levels (0.1 %, 0.5 %) are. */
const rate = (count: number, r: number) => `${count.toLocaleString('en-US')} (${(r * 100).toFixed(r > 0 && r < 0.01 ? 2 : 1)}%)`;

export function register(cmd: Command): void {
  cmd.option('--workspace <id>', 'workspace id, ws_... (default: the only workspace)');
  adminAction<{ workspace?: string; adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay reputation', 'ravenctl relay reputation --workspace ws_... --json'] },
    async (ctx, admin, opts) => {
      const workspace = await chooseWorkspace(ctx, admin, opts.workspace);
      const reputation = await (await admin()).reputation(workspace);
      const rows: Row[] = [
        ...reputation.windows.map((w) => ({ ...w, scope: 'workspace' })),
        ...reputation.projects.flatMap((p) => p.windows.map((w) => ({ ...w, scope: p.project_id }))),
      ];
      ctx.out.result(reputation, () =>
        renderTable<Row>(
          [
            { header: 'SCOPE', value: (r) => r.scope },
            { header: 'WINDOW', value: (r) => `${r.days} ${r.days === 1 ? 'day' : 'days'}` },
            { header: 'SENT', value: (r) => r.sent.toLocaleString('en-US') },
            { header: 'BOUNCED', value: (r) => rate(r.bounced, r.bounce_rate) },
            { header: 'BOUNCE LEVEL', value: (r) => level(r.bounce_level), style: (r) => LEVEL_STYLE[r.bounce_level] },
            { header: 'COMPLAINED', value: (r) => rate(r.complained, r.complaint_rate) },
            { header: 'COMPLAINT LEVEL', value: (r) => level(r.complaint_level), style: (r) => LEVEL_STYLE[r.complaint_level] },
          ],
          rows,
          ctx.out.paint,
        ),
      );
    },
  );
}
