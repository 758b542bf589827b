// The API's emails of the selected project: filters by status and recipient, cursor paging.
import { useState } from 'preact/hooks';
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { href } from '../router';
import type { Tenancy } from '../tenancy';
import { Badge, ErrorNote, useLoad, Table } from '../ui';

// Every status of openapi.yaml (EmailStatus): a missing or unknown key is a type error.
const STATUS_SET: Record<Schemas['EmailStatus'], true> = { queued: true, suppressed: true, sent: true, delivered: true, bounced: true, failed: true, delivery_unknown: true };
const STATUSES = Object.keys(STATUS_SET) as Schemas['EmailStatus'][];

export function EmailLog({ tenancy }: { tenancy: Tenancy }) {
  const [status, setStatus] = useState('');
  const [recipient, setRecipient] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const project = tenancy.project;
  const cursor = cursors[cursors.length - 1];
  const { data, error } = useLoad(async () => {
    if (!project) return undefined;
    const params = new URLSearchParams();
    if (status) params.set('status', status);
    if (recipient.trim()) params.set('recipient', recipient.trim());
    if (cursor) params.set('cursor', cursor);
    return api<Schemas['AdminEmailList']>('GET', `/admin/v1/projects/${seg(project.id)}/emails?${params}`);
  }, [project?.id, status, recipient, cursor]);

  return (
    <section>
      <div class="page-head">
        <h1>Email log</h1>
        <div class="toolbar">
          <select aria-label="Status" value={status} onChange={(e) => (setCursors([]), setStatus((e.target as HTMLSelectElement).value))}>
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
          <input type="search" aria-label="Recipient" placeholder="Recipient (exact address)" value={recipient} onChange={(e) => (setCursors([]), setRecipient((e.target as HTMLInputElement).value))} />
        </div>
      </div>
      <p class="muted">Project {project ? `${project.name} (${project.environment})` : '—'}: the emails sent through the API or SMTP submission, newest first.</p>
      <ErrorNote error={error} />
      <Table columns={['Status', 'Subject', 'To', 'From', 'Created']}>
          {data?.emails.map((e) => (
            <tr key={e.id}>
              <td>
                <Badge value={e.status} />
              </td>
              <td>
                <a href={href('emails', e.id)}>{e.subject}</a>
                {e.test_mode ? <span class="chip">test</span> : null}
                {e.source === 'smtp' ? (
                  <span class="chip" data-source="smtp" title="Came over SMTP submission">
                    SMTP
                  </span>
                ) : null}
              </td>
              <td>{e.to.join(', ')}</td>
              <td>{e.from}</td>
              <td class="nowrap">{formatDateTime(e.created_at)}</td>
            </tr>
          ))}
        </Table>
      {data && data.emails.length === 0 ? <p class="empty">No email matches.</p> : null}
      <div class="more">
        {cursors.length > 0 ? (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
        ) : null}
        {data?.next_cursor ? (
          <button type="button" onClick={() => setCursors([...cursors, data.next_cursor!])}>
            Older
          </button>
        ) : null}
      </div>
    </section>
  );
}
