// Routes live in the URL fragment (#/inbox/msg_...), so the relay serves one page at `/` and
// never shadows an API path. The sign-in link's #signin=... is read once and removed.
import { useEffect, useState } from 'preact/hooks';

export function currentRoute(): string[] {
  const hash = location.hash.replace(/^#\/?/, '');
  if (hash.startsWith('signin=')) return ['inbox'];
  const parts = hash.split('/').filter(Boolean).map(decodeURIComponent);
  return parts.length > 0 ? parts : ['inbox'];
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function navigate(...parts: string[]): void {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

/** The sign-in link's nonce, taken out of the address bar (and so out of history) at once. */
export function takeSigninNonce(): string | undefined {
  const m = /^#signin=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return undefined;
  history.replaceState(null, '', `${location.pathname}#/inbox`);
  return m[1];
}
