// The summary badge of a message's checks (issue 26): pass, warnings or fail, with the reasons,
// from the checks that need nothing but the message itself and the relay's own records
// (authentication, headers) plus the spam score when spamd scored it. Links never count: checking
// them sends requests to the URLs in the mail (a confirmation or unsubscribe link among them),
// which the relay does only when someone asks. HTML compatibility never counts either: nearly
// every real HTML email uses something some client lacks (a dozen strip the <body> element
// itself), so a rule on its score would mark them all; the Checks tab shows the score. README's "Checks"
// section states these rules; change both together, and bump VERDICT_RULES so cached badges
// computed under the old rules are computed again.
import type { AuthenticationChecks } from './authentication.js';
import type { HeaderCheck } from './headers.js';
import type { SpamCheck } from './spam.js';

export type Verdict = 'pass' | 'warnings' | 'fail';

export interface CheckVerdict {
  verdict: Verdict;
  /** Why it is not a pass, worst first; empty for a pass. */
  reasons: string[];
}

/** The version of the rules below; a cached badge of another version is stale. */
export const VERDICT_RULES = 1;

/**
 * DKIM results that mean a signature is there and does not verify: mailauth reports a body hash
 * that does not match as `neutral` (RFC 8601: a signature that could not be processed).
 */
const DKIM_BROKEN = new Set(['fail', 'permerror', 'neutral']);

export function checksVerdict(checks: {
  authentication: AuthenticationChecks;
  headers: HeaderCheck[];
  spam: SpamCheck | null;
}): CheckVerdict {
  const failures: string[] = [];
  const warnings: string[] = [];
  const auth = checks.authentication;
  for (const d of auth.dkim) {
    if (DKIM_BROKEN.has(d.result)) failures.push(`DKIM ${d.result} for ${d.domain || 'an unnamed domain'}${d.reason ? `: ${d.reason}` : ''}`);
  }
  if (!auth.dkim.some((d) => d.result === 'pass')) {
    if (auth.dkim.length === 0) warnings.push('no DKIM signature');
    else if (!auth.dkim.some((d) => DKIM_BROKEN.has(d.result))) warnings.push('no DKIM signature verifies (temperror or policy)');
  }
  if (auth.spf.result === 'fail') failures.push(`SPF fail${auth.spf.domain ? ` for ${auth.spf.domain}` : ''}`);
  else if (['softfail', 'temperror', 'permerror'].includes(auth.spf.result)) warnings.push(`SPF ${auth.spf.result}${auth.spf.domain ? ` for ${auth.spf.domain}` : ''}`);
  // A DMARC fail under p=none changes nothing at the receiver (the relay recommends p=none to
  // start with): it warns; under quarantine or reject the mail is lost, and it fails.
  const dmarcAt = auth.dmarc.domain ? ` for ${auth.dmarc.domain}` : '';
  if (auth.dmarc.result === 'fail' && (auth.dmarc.policy === null || auth.dmarc.policy === 'none')) warnings.push(`DMARC fail${dmarcAt} (policy none)`);
  else if (auth.dmarc.result === 'fail') failures.push(`DMARC fail${dmarcAt} (policy ${auth.dmarc.policy})`);
  else if (['temperror', 'permerror'].includes(auth.dmarc.result)) warnings.push(`DMARC ${auth.dmarc.result}`);
  for (const h of checks.headers) {
    if (h.result === 'fail') failures.push(`${h.name}: ${h.message}`);
    else if (h.result === 'warn') warnings.push(`${h.name}: ${h.message}`);
  }
  if (checks.spam?.available && checks.spam.is_spam) failures.push(`spam: SpamAssassin scores ${checks.spam.score} (threshold ${checks.spam.threshold})`);
  const verdict: Verdict = failures.length > 0 ? 'fail' : warnings.length > 0 ? 'warnings' : 'pass';
  return { verdict, reasons: [...failures, ...warnings] };
}
