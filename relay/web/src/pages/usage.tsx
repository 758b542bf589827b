// Usage: this month against each limit (workspace, each key), and daily sends over 30 days.
import { api, seg, type Schemas } from '../api';
import type { Tenancy } from '../tenancy';
import { ErrorNote, useLoad, Table } from '../ui';

function Meter({ used, limit }: { used: number; limit: number | null }) {
  const share = limit ? Math.min(1, used / limit) : 0;
  return (
    <div class="meter-row">
      <span class="meter-figures">
        <strong>{used.toLocaleString()}</strong> / {limit === null ? 'no limit' : limit.toLocaleString()}
      </span>
      {limit ? (
        <span class="meter" role="meter" aria-valuenow={used} aria-valuemin={0} aria-valuemax={limit}>
          <span style={{ width: `${share * 100}%` }} class={share > 0.9 ? 'fill warn' : 'fill'} />
        </span>
      ) : null}
    </div>
  );
}

function DailyChart({ days }: { days: Schemas['DailyUsage']['days'] }) {
  const max = Math.max(1, ...days.map((d) => d.emails));
  const width = 600;
  const height = 140;
  const bar = width / days.length;
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label="Emails sent per day, last 30 days">
      {days.map((d, i) => {
        const h = (d.emails / max) * height;
        return (
          <g key={d.date}>
            <rect x={i * bar + 2} y={height - h} width={bar - 4} height={Math.max(h, 0.5)} rx="2">
              <title>
                {d.date}: {d.emails}
              </title>
            </rect>
            {i % 7 === 0 || i === days.length - 1 ? (
              <text x={i * bar + bar / 2} y={height + 14} text-anchor="middle">
                {d.date.slice(5)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}

export function UsagePage({ tenancy }: { tenancy: Tenancy }) {
  const ws = tenancy.workspace;
  const { data, error } = useLoad(
    async () =>
      ws
        ? Promise.all([
            api<Schemas['Usage']>('GET', `/admin/v1/workspaces/${seg(ws.id)}/usage`),
            api<Schemas['DailyUsage']>('GET', `/admin/v1/workspaces/${seg(ws.id)}/usage/daily`),
          ])
        : undefined,
    [ws?.id],
  );
  const [usage, daily] = data ?? [];
  return (
    <section>
      <h1>Usage {usage ? <span class="muted">{usage.month}</span> : null}</h1>
      <ErrorNote error={error} />
      {usage ? (
        <>
          <div class="card" data-testid="workspace-usage">
            <h2>Workspace {ws?.name}</h2>
            <p class="muted">Accepted recipients this month (UTC), across all projects.</p>
            <Meter used={usage.workspace.used} limit={usage.workspace.limit} />
          </div>
          <Table columns={['Key', 'Used this month']}>
              {usage.keys.map((k) => (
                <tr key={k.id} data-usage-key={k.id}>
                  <td>
                    <code>{k.id}</code>
                  </td>
                  <td>
                    <Meter used={k.used} limit={k.limit} />
                  </td>
                </tr>
              ))}
            </Table>
        </>
      ) : null}
      {daily ? (
        <div class="card">
          <h2>Emails sent per day</h2>
          <DailyChart days={daily.days} />
        </div>
      ) : null}
    </section>
  );
}
