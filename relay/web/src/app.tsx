// The page: sign-in until there is a session, then the shell (navigation, workspace and project
// pickers) around the routed page.
import { useEffect, useState } from 'preact/hooks';
import { api, setSession, whenSignedOut, type Schemas } from './api';
import { watchUnread } from './live';
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
  const [menuOpen, setMenuOpen] = useState(false);
  const section = route[0]!;

  // The badge on every page, from the first paint: not only once the inbox has loaded.
  useEffect(() => watchUnread(setUnread), []);
  // The folded menu (phone width) closes when the page changes or on Escape.
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && setMenuOpen(false);
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [menuOpen]);

  const signOut = async () => {
    await api('DELETE', '/admin/v1/session').catch(() => undefined);
    setSession(null);
    onSignOut();
  };

  let page;
  if (section === 'inbox' && route[1]) page = <MessagePage id={route[1]} />;
  else if (section === 'inbox') page = <Inbox projects={tenancy.projects} />;
  else if (section === 'emails' && route[1]) page = <EmailPage id={route[1]} />;
  else if (section === 'emails') page = <EmailLog tenancy={tenancy} />;
  else page = <SettingsPage page={section} tenancy={tenancy} />;

  const link = (to: string, label: string, extra?: string | number) => (
    <a href={href(to)} class={section === to ? 'active' : ''} aria-current={section === to ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
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
      <nav class={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Main">
        <div class="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          <span>Raven</span>
          {/* Shown at phone width only (styles.css): the links fold behind it. */}
          <button
            type="button"
            class="menu-button"
            aria-expanded={menuOpen}
            aria-controls="nav-links"
            aria-label={unread ? `Menu, ${unread} unread` : 'Menu'}
            onClick={() => setMenuOpen(!menuOpen)}
          >
            {unread ? (
              <span class="count" data-testid="menu-count">
                {unread}
              </span>
            ) : null}
            <MenuIcon open={menuOpen} />
          </button>
        </div>
        <div class="nav-links" id="nav-links">
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
        </div>
      </nav>
      {menuOpen ? <div class="menu-scrim" onClick={() => setMenuOpen(false)} /> : null}
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

/** Three bars, or a cross while the menu is open (drawn inline: no icon font). */
function MenuIcon({ open }: { open: boolean }) {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">
      {open ? <path d="M6 6l12 12M18 6 6 18" /> : <path d="M4 7h16M4 12h16M4 17h16" />}
    </svg>
  );
}
