// What a test or a person takes out of a captured message: its one-time codes and its links, each
// with a copy button (CONTRACT section 10). The URLs and texts come from mail: rendered as text,
// and a link opens only in a new tab without a referrer.
import type { Schemas } from '../api';
import { CopyButton } from '../ui';

export function MessageExtracts({ message }: { message: Schemas['CapturedMessage'] }) {
  if (message.codes.length === 0 && message.links.length === 0) return null;
  return (
    <div class="extracts">
      {message.codes.length > 0 ? (
        <ul class="extract-codes" aria-label="One-time codes">
          {message.codes.map((code) => (
            <li key={code}>
              <code data-testid="code">{code}</code> <CopyButton value={code} label="Copy code" />
            </li>
          ))}
        </ul>
      ) : null}
      {message.links.length > 0 ? (
        <ul class="extract-links" aria-label="Links">
          {message.links.map((link) => (
            <li key={link.url}>
              <a href={link.url} target="_blank" rel="noopener noreferrer" data-testid="link">
                {link.text || link.url}
              </a>{' '}
              <span class="muted url">{link.text && link.text !== link.url ? link.url : ''}</span> <CopyButton value={link.url} label="Copy link" />
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
