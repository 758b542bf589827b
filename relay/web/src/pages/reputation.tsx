// The usage page's reputation (issue 25): bounce and complaint rates over 1, 7 and 30 days for the
// workspace and each project that sent, each with its level (ok, review, at risk) as the relay
// decides it. Self-contained: the usage page adds it with one line.
import { api, seg, type Schemas } from '../api';
import type { Tenancy } from '../tenancy';
import { Badge, ErrorNote, Table, useLoad } from '../ui';

const percent = (rate: number) => `${(rate * 100).toFixed(rate > 0 && rate < 0.01 ? 2 : 1)} %`;

function WindowCell({ w }: { w: Schemas['ReputationWindow'] }) {
  return (
    <td data-days={w.days}>
      <div class="muted small">{w.sent.toLocaleString()} sent</div>
      <div data-rate="bounce">
        Bounces {percent(w.bounce_rate)} <Badge value={w.bounce_level} />
      </div>
      <div data-rate="complaint">
        Complaints {percent(w.complaint_rate)} <Badge value={w.complaint_level} />
      </div>
    </td>
  );
}

export function ReputationCard({ tenancy }: { tenancy: Tenancy }) {
  const ws = tenancy.workspace;
  const { data, error } = useLoad(async () => (ws ? api<Schemas['Reputation']>('GET', `/admin/v1/workspaces/${seg(ws.id)}/reputation`) : undefined), [ws?.id]);
  const nameOf = (projectId: string) => tenancy.projects.find((p) => p.id === projectId)?.name ?? projectId;
  const columns = ['', ...(data?.windows ?? []).map((w) => (w.days === 1 ? 'Last day' : `Last ${w.days} days`))];
  return (
    <div class="card reputation" data-testid="reputation">
      <h2>Reputation</h2>
      <p class="muted">
        Bounced and complained recipients among those that reached the provider. Providers review an account at the <Badge value="review" /> level
        and may pause it at <Badge value="at_risk" />.
      </p>
      <ErrorNote error={error} />
      {data ? (
        <Table columns={columns}>
          <tr data-scope="workspace">
            <td>
              <strong>Workspace {ws?.name}</strong>
            </td>
            {data.windows.map((w) => (
              <WindowCell key={w.days} w={w} />
            ))}
          </tr>
          {data.projects.map((p) => (
            <tr key={p.project_id} data-scope={p.project_id}>
              <td>{nameOf(p.project_id)}</td>
              {p.windows.map((w) => (
                <WindowCell key={w.days} w={w} />
              ))}
            </tr>
          ))}
        </Table>
      ) : null}
    </div>
  );
}
