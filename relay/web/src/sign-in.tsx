// CONTRACT section 8: without a session, only this form, whose only input is a password field.
import { useState } from 'preact/hooks';
import { api, type Schemas } from './api';
import { messageOf } from './ui';

export function SignIn({ onSignedIn, initialError }: { onSignedIn: (session: Schemas['DashboardSession']) => void; initialError?: string }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(initialError);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await api<Schemas['DashboardSession']>('POST', '/admin/v1/session', { token }));
    } catch (failure) {
      setError(messageOf(failure));
      setToken('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="signin">
      <form class="signin-card" onSubmit={submit}>
        <div class="brand">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          <span>Raven</span>
        </div>
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          name="token"
          type="password"
          autoComplete="current-password"
          required
          autoFocus
          value={token}
          onInput={(event) => setToken((event.target as HTMLInputElement).value)}
        />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
        <p class="muted small-print">
          The relay prints the admin token on its first start, and a one-time sign-in link on every start.
        </p>
      </form>
    </div>
  );
}
