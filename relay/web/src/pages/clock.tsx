// The test clock (relay started with --test-clock): the relay's time and an advance control.
import { useState } from 'preact/hooks';
import { api, type Schemas } from '../api';
import { formatDateTime } from '../format';
import { ErrorNote, useAction, useLoad } from '../ui';

export function ClockPage() {
  const [seconds, setSeconds] = useState('3600');
  const action = useAction();
  const { data, error, setData } = useLoad(() => api<Schemas['Clock']>('GET', '/admin/v1/clock'), []);
  const advance = (event: Event) => {
    event.preventDefault();
    void action.run(async () => setData(await api<Schemas['Clock']>('POST', '/admin/v1/clock/advance', { seconds: Number(seconds) })));
  };
  return (
    <section>
      <h1>Test clock</h1>
      {error ? <p class="empty">{error}</p> : null}
      {data ? (
        <div class="card">
          <p>
            Relay time: <strong data-testid="clock-now">{formatDateTime(data.now)}</strong> <code class="muted">{data.now}</code>
          </p>
          <form class="inline-form" onSubmit={advance}>
            <input type="number" min="0" step="1" required aria-label="Seconds to advance" value={seconds} onInput={(e) => setSeconds((e.target as HTMLInputElement).value)} />
            <button type="submit" class="primary" disabled={action.busy}>
              Advance
            </button>
          </form>
          <ErrorNote error={action.error} />
        </div>
      ) : null}
    </section>
  );
}
