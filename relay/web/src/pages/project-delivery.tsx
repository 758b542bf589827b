// Pause and resume delivery of one project (issue 25): admission goes on, the mail waits. A cell
// of the projects table; it loads the project's state itself.
import { api, seg, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { confirmAction, ErrorNote, useAction, useLoad } from '../ui';

export function ProjectDeliveryToggle({ project }: { project: Schemas['Project'] }) {
  const { data, error, setData } = useLoad(() => api<Schemas['ProjectDelivery']>('GET', `/admin/v1/projects/${seg(project.id)}/delivery`), [project.id]);
  const action = useAction();
  const toggle = async () => {
    if (!data) return;
    const pausing = !data.delivery_paused;
    if (pausing) {
      const ok = await confirmAction(
        `Pause delivery of ${project.name}?`,
        <p>Mail keeps being accepted and waits; nothing is delivered until you resume.</p>,
        'Pause delivery',
      );
      if (!ok) return;
    }
    await action.run(async () => setData(await api<Schemas['ProjectDelivery']>('POST', `/admin/v1/projects/${seg(project.id)}/delivery/${pausing ? 'pause' : 'resume'}`)));
  };
  if (!data) return <ErrorNote error={error} />;
  return (
    <div class="delivery-toggle" data-paused={String(data.delivery_paused)}>
      <span class={data.delivery_paused ? 'badge badge-pending' : 'badge badge-sent'} title={data.paused_at ? `since ${formatDateTime(data.paused_at)}` : undefined}>
        {data.delivery_paused ? 'paused' : 'delivering'}
      </span>{' '}
      <button type="button" class="small" disabled={action.busy} onClick={toggle}>
        {data.delivery_paused ? 'Resume delivery' : 'Pause delivery'}
      </button>
      <ErrorNote error={action.error} />
    </div>
  );
}
