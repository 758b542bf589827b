// The page: sign-in until there is a session, then the shell (navigation, workspace and project
// pickers) around the routed page.
import { useEffect, useState } from 'preact/hooks';
import { api, setSession, whenSignedOut, type Schemas } from './api';
import { EmailLog } from './pages/email-log';
import { EmailPage } from './pages/email-page';
import { Inbox } from './pages/inbox';
import { MessagePage } from './pages/message';
import { SETTINGS_PAGES, SettingsPage } from './pages/settings';
import { href, takeSigninNonce, useRoute } from './router';
import { SignIn } from './sign-in';
import { useTenancy, TenancyPicker } from './tenancy';
import { ConfirmHost } from './ui';

type SessionState = 'checking' | 'signed-out' | 'signed-in';

export function App() {
  const [state, setState] = useState<SessionState>('checking');
  const [linkError, setLinkError] = useState<string | undefined>(undefined);

  useEffect(() => {
    whenSignedOut(() => {
      setSession(null);
      setState('signed-out');
    });
    const nonce = takeSigninNonce();
    const signIn = nonce
      ? api<Schemas['DashboardSession']>('POST', '/admin/v1/session', { signin_link: nonce }).catch((error: Error) => {
          setLinkError(error.message);
          throw error;
        })
      : api<Schemas['DashboardSession']>('GET', '/admin/v1/session');
    signIn.then(
      (session) => {
        setSession(session);
        setState('signed-in');
      },
      () => setState('signed-out'),
    );
  }, []);

  if (state === 'checking') return null;
  if (state === 'signed-out') {
    return (
      <SignIn
        initialError={linkError}
        onSignedIn={(session) => {
          setSession(session);
          setState('signed-in');
        }}
      />
    );
  }
  return <Shell onSignOut={() => setState('signed-out')} />;
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const tenancy = useTenancy();
  const [unread, setUnread] = useState<number | undefined>(undefined);
  const section = route[0]!;

  const signOut = async () => {
    await api('DELETE', '/admin/v1/session').catch(() => undefined);
    setSession(null);
    onSignOut();
  };

  let page;
  if (section === 'inbox' && route[1]) page = <MessagePage id={route[1]} onUnread={setUnread} />;
  else if (section === 'inbox') page = <Inbox onUnread={setUnread} />;
  else if (section === 'emails' && route[1]) page = <EmailPage id={route[1]} />;
  else if (section === 'emails') page = <EmailLog tenancy={tenancy} />;
  else page = <SettingsPage page={section} tenancy={tenancy} />;

  const link = (to: string, label: string, extra?: string | number) => (
    <a href={href(to)} class={section === to ? 'active' : ''} aria-current={section === to ? 'page' : undefined}>
      <span>{label}</span>
      {extra !== undefined && extra !== 0 ? (
        <span class="count" data-testid={`${to}-count`}>
          {extra}
        </span>
      ) : null}
    </a>
  );

  return (
    <div class="shell">
      <nav class="sidebar" aria-label="Main">
        <div class="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          <span>Raven</span>
        </div>
        <div class="nav-group">
          <div class="nav-title">Mail</div>
          {link('inbox', 'Inbox', unread)}
          {link('emails', 'Email log')}
        </div>
        <div class="nav-group">
          <div class="nav-title">Dashboard</div>
          {SETTINGS_PAGES.map((p) => link(p.id, p.label))}
        </div>
        <div class="nav-foot">
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <div class="main">
        <header class="topbar">
          <TenancyPicker tenancy={tenancy} />
        </header>
        <main class="content">{page}</main>
      </div>
      <ConfirmHost />
    </div>
  );
}
