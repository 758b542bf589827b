// Usage: this month against each limit (workspace, each key), reputation (reputation.tsx), and
// daily sends over 30 days.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import type { Tenancy } from '../tenancy';
import { ErrorNote, useLoad, Table } from '../ui';
import { ReputationCard } from './reputation';

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

const CHART_HEIGHT = 170;
const AXIS_PX = 22;
/** Room for one date label ("11-25") and the space between two of them, in pixels. */
const LABEL_GAP_PX = 64;
/** Days between two date labels: the first of these that leaves LABEL_GAP_PX between them. */
const LABEL_STEPS = [1, 2, 3, 7, 14, 30];

/** The chart is drawn in the pixels it has (not a scaled drawing): text stays 11 px at any width. */
function useWidth<T extends Element>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.observe(ref.current!);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

function DailyChart({ days }: { days: Schemas['DailyUsage']['days'] }) {
  const { ref, width } = useWidth<SVGSVGElement>();
  const max = Math.max(1, ...days.map((d) => d.emails));
  const gutter = 10 + 7 * String(max).length;
  const plot = CHART_HEIGHT - AXIS_PX;
  const bar = days.length > 0 ? (width - gutter) / days.length : 0;
  const step = LABEL_STEPS.find((s) => s * bar >= LABEL_GAP_PX) ?? days.length;
  // Labelled days count back from today, which always has one (anchored at the right edge); a
  // label too close to the y axis is left out rather than clipped.
  const labelled = new Set<number>();
  for (let i = days.length - 1; i >= 0; i -= step) if (i === days.length - 1 || (i + 0.5) * bar >= LABEL_GAP_PX / 2) labelled.add(i);
  return (
    <svg ref={ref} class="chart" height={CHART_HEIGHT} viewBox={`0 0 ${width} ${CHART_HEIGHT}`} role="img" aria-label="Emails sent per day, last 30 days">
      {width > 0 ? (
        <>
          <line class="grid" x1={gutter} x2={width} y1={0.5} y2={0.5} />
          <line class="axis" x1={gutter} x2={width} y1={plot + 0.5} y2={plot + 0.5} />
          <text x={gutter - 6} y={12} text-anchor="end">
            {max}
          </text>
          <text x={gutter - 6} y={plot} text-anchor="end">
            0
          </text>
          {days.map((d, i) => {
            const h = (d.emails / max) * (plot - 1);
            const last = i === days.length - 1;
            return (
              <g key={d.date}>
                <rect x={gutter + i * bar + bar * 0.15} y={plot - h} width={bar * 0.7} height={Math.max(h, 0.5)} rx="2">
                  <title>
                    {d.date}: {d.emails}
                  </title>
                </rect>
                {labelled.has(i) ? (
                  <text x={last ? width : gutter + (i + 0.5) * bar} y={CHART_HEIGHT - 6} text-anchor={last ? 'end' : 'middle'}>
                    {d.date.slice(5)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </>
      ) : null}
    </svg>
  );
}

/** The workspace's keys by id, across its projects: usage lists ids, people know keys by name. */
async function keysOf(workspaceId: string): Promise<Map<string, { key: Schemas['ApiKey']; project: Schemas['Project'] }>> {
  const { projects } = await api<Schemas['ProjectList']>('GET', `/admin/v1/workspaces/${seg(workspaceId)}/projects`);
  const lists = await Promise.all(projects.map((p) => api<Schemas['ApiKeyList']>('GET', `/admin/v1/projects/${seg(p.id)}/keys`)));
  return new Map(lists.flatMap((list, i) => list.keys.map((key) => [key.id, { key, project: projects[i]! }] as const)));
}

export function UsagePage({ tenancy }: { tenancy: Tenancy }) {
  const ws = tenancy.workspace;
  const { data, error } = useLoad(
    async () =>
      ws
        ? Promise.all([
            api<Schemas['Usage']>('GET', `/admin/v1/workspaces/${seg(ws.id)}/usage`),
            api<Schemas['DailyUsage']>('GET', `/admin/v1/workspaces/${seg(ws.id)}/usage/daily`),
            keysOf(ws.id),
          ])
        : undefined,
    [ws?.id],
  );
  const [usage, daily, keys] = data ?? [];
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
              {usage.keys.map((k) => {
                const known = keys?.get(k.id);
                return (
                  <tr key={k.id} data-usage-key={k.id}>
                    <td>
                      {known ? (
                        <>
                          <strong>{known.key.name}</strong>
                          <div class="muted small">
                            {known.project.name} · <code>{known.key.redacted}</code>
                            {known.key.revoked_at ? ' · revoked' : ''}
                          </div>
                        </>
                      ) : (
                        <code>{k.id}</code>
                      )}
                    </td>
                    <td>
                      <Meter used={k.used} limit={k.limit} />
                    </td>
                  </tr>
                );
              })}
            </Table>
        </>
      ) : null}
      <ReputationCard tenancy={tenancy} />
      {daily ? (
        <div class="card">
          <h2>Emails sent per day</h2>
          <DailyChart days={daily.days} />
        </div>
      ) : null}
    </section>
  );
}
