/**
 * What the API's resources look like to a person, shared by several commands: emails (send --wait,
 * emails list/get), domains and captured messages (relay messages get/wait). output.ts owns the how (JSON or human, streams, colour, tables and
 * fields); this file only says which columns and fields each resource shows.
 */
import { PENDING_RECIPIENT_STATUSES, type CapturedMessage, type DeliveryAttempt, type MessageChecks, type Domain, type EmailDetail, type EmailSummary } from 'raven-email-sdk';
import { renderFields, renderTable, renderTimeline, statusStyle, type Column, type Paint } from './output.js';

export const EMAIL_COLUMNS: Column<EmailSummary>[] = [
  { header: 'ID', value: (e) => e.id },
  { header: 'STATUS', value: (e) => e.status, style: (e) => statusStyle(e.status) },
  { header: 'TO', value: (e) => e.to.join(', '), maxWidth: 40 },
  { header: 'SUBJECT', value: (e) => e.subject, maxWidth: 50 },
  { header: 'CREATED', value: (e) => e.created_at },
];

export function renderEmailList(emails: EmailSummary[], paint: Paint): string {
  if (emails.length === 0) return paint('dim', 'No emails.');
  return renderTable(EMAIL_COLUMNS, emails, paint);
}

function pairs(record: Record<string, unknown> | null | undefined): string | undefined {
  const entries = Object.entries(record ?? {});
  return entries.length === 0 ? undefined : entries.map(([k, v]) => `${k}=${String(v)}`).join(' ');
}

export function renderEmailDetail(email: EmailDetail, paint: Paint): string {
  const header = renderFields(
    [
      ['ID', email.id],
      ['Status', paint(statusStyle(email.status), email.status)],
      ['From', email.from],
      ['To', email.to.join(', ')],
      ['Cc', email.cc.length > 0 ? email.cc.join(', ') : undefined],
      ['Reply-To', email.reply_to ?? undefined],
      ['Subject', email.subject],
      ['Tags', pairs(email.tags as Record<string, unknown>)],
      ['Metadata', pairs(email.metadata as Record<string, unknown>)],
      ['Test mode', email.test_mode ? 'yes' : 'no'],
      ['Provider id', email.providerMessageId ?? undefined],
      ['Created', email.created_at],
    ],
    paint,
  );
  const recipients =
    email.recipients.length === 0
      ? paint('dim', '  (none listed)')
      : renderTable(
          [
            { header: 'EMAIL', value: (r) => r.email },
            { header: 'TYPE', value: (r) => r.type },
            { header: 'STATUS', value: (r) => r.status, style: (r) => statusStyle(r.status) },
            { header: 'UPDATED', value: (r) => r.updated_at },
          ],
          email.recipients,
          paint,
        )
          .split('\n')
          .map((l) => `  ${l}`)
          .join('\n');
  return [
    header,
    '',
    paint('bold', 'Recipients'),
    recipients,
    '',
    paint('bold', 'Events'),
    renderTimeline(email.events, paint),
  ].join('\n');
}

/**
 * Why an email still waits: the reason of its latest delivery_delayed event (a fixed phrase such as
 * `TLS: self-signed certificate`), with when it is tried next. Undefined when none says.
 */
export function waitingReason(email: EmailDetail): string | undefined {
  const delayed = email.events.filter((e) => e.type === 'email.delivery_delayed').at(-1);
  const payload = (delayed?.payload ?? {}) as { reason?: unknown; next_attempt_at?: unknown };
  if (typeof payload.reason !== 'string') return undefined;
  const next = typeof payload.next_attempt_at === 'string' ? `; next attempt at ${payload.next_attempt_at}` : '';
  return `delivery_delayed: ${payload.reason}${next}`;
}

export function isTerminal(email: EmailDetail): boolean {
  if (email.status === 'suppressed') return true;
  // BCC recipients are not listed, so an aggregate still `queued` also means "not yet".
  if (email.status === 'queued') return false;
  // Terminal (CONTRACT section 4): no recipient left in a status that may still change.
  return !email.recipients.some((r) => (PENDING_RECIPIENT_STATUSES as readonly string[]).includes(r.status));
}


/** A domain and the DNS records it needs (relay domains add / verify). */
export function renderDomain(domain: Domain, paint: Paint): string {
  const header = renderFields(
    [
      ['ID', domain.id],
      ['Name', domain.name],
      ['Status', paint(statusStyle(domain.status === 'verified' ? 'delivered' : 'queued'), domain.status)],
      ['Project', domain.project_id],
      ['Verified', domain.verified_at ?? undefined],
    ],
    paint,
  );
  if (domain.records.length === 0) return header;
  const records = renderTable(
    [
      { header: 'TYPE', value: (r) => r.type },
      { header: 'NAME', value: (r) => r.name },
      { header: 'VALUE', value: (r) => (r.priority !== undefined ? `${r.priority} ${r.value}` : r.value) },
      { header: 'PURPOSE', value: (r) => `${r.purpose}${r.required ? '' : ' (optional)'}` },
      { header: 'STATUS', value: (r) => r.status ?? '-' },
    ],
    domain.records,
    paint,
  );
  // Why each record failed, under the table: a value or a resolver error does not fit a column.
  const problems = domain.records.filter((r) => r.problem).map((r) => `  ${r.purpose}: ${r.problem}`);
  const why = problems.length > 0 ? `\n\n${paint('bold', 'Not verified')}\n${problems.join('\n')}` : '';
  return `${header}\n\n${paint('bold', 'DNS records')}\n${records}${why}`;
}

/** A captured message: envelope, project, headers, links and codes, then the text and the HTML. */
export function renderCapturedMessage(message: CapturedMessage, paint: Paint): string {
  return [
    renderFields(
      [
        ['ID', message.id],
        ['Envelope from', message.from],
        ['Envelope to', message.to.join(', ')],
        ['Subject', message.subject ?? ''],
        ['Project', message.project_id ?? '-'],
        ['Received', message.received_at],
        ['Size', `${message.size} bytes`],
      ],
      paint,
    ),
    '',
    paint('bold', 'Headers'),
    ...message.headers.map(([name, value]) => `  ${paint('dim', `${name}:`)} ${value}`),
    ...(message.codes.length > 0 ? ['', paint('bold', 'Codes'), ...message.codes.map((code) => `  ${code}`)] : []),
    ...(message.links.length > 0
      ? ['', paint('bold', 'Links'), ...message.links.map((link) => `  ${link.url}${link.text && link.text !== link.url ? paint('dim', `  ${link.text}`) : ''}`)]
      : []),
    ...(message.text !== null ? ['', paint('bold', 'Text'), message.text] : []),
    ...(message.html !== null ? ['', paint('bold', 'HTML'), message.html] : []),
  ].join('\n');
}

/** Delivery attempts, oldest first: a line per attempt, then its SMTP conversation indented. */
/** ` (TLSv1.3, certificate verified)`, ` (TLS refused: certificate not verified)`, or nothing without TLS. */
function tlsNote(a: DeliveryAttempt): string {
  if (a.certificate_verified === false) return ' (TLS refused: certificate not verified)';
  if (!a.tls) return '';
  return ` (${a.tls_version ?? 'TLS'}${a.certificate_verified ? ', certificate verified' : ''})`;
}

export function renderAttempts(attempts: DeliveryAttempt[], paint: Paint): string {
  if (attempts.length === 0) return paint('dim', 'No delivery attempts yet.');
  return attempts
    .map((a) => {
      const where = a.host === null ? a.provider : `${a.provider} ${a.host}:${a.port}${tlsNote(a)}`;
      const head = `${paint('dim', a.started_at)}  #${a.attempt} ${a.recipient}  ${paint(statusStyle(a.outcome), a.outcome)}  ${where}`;
      const lines = [head];
      if (a.reply) lines.push(`  reply: ${a.reply}`);
      if (a.next_attempt_at) lines.push(`  next attempt: ${a.next_attempt_at}`);
      for (const t of a.transcript) lines.push(`    ${paint(t.dir === 'C' ? 'cyan' : 'dim', t.dir)}: ${t.line}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

/** A check's result word in its colour: pass green, fail red, anything in between yellow. */
function resultWord(result: string, paint: Paint): string {
  return paint(result === 'pass' ? 'green' : result === 'fail' || result === 'permerror' ? 'red' : 'yellow', result);
}

export function renderMessageChecks(checks: MessageChecks, paint: Paint): string {
  const lines: string[] = [`${paint('bold', 'Verdict')}  ${resultWord(checks.summary.verdict, paint)}`];
  for (const reason of checks.summary.reasons) lines.push(`  ${reason}`);
  for (const s of checks.skipped) lines.push(paint('dim', `  ${s.check} not checked: ${s.reason}`));
  lines.push('', paint('bold', 'Authentication'));
  const { dkim, spf, dmarc } = checks.authentication;
  if (dkim.length === 0) lines.push(`  DKIM   ${resultWord('none', paint)}  no signature`);
  for (const d of dkim) lines.push(`  DKIM   ${resultWord(d.result, paint)}  ${d.domain}${d.selector ? ` (s=${d.selector})` : ''}${d.reason ? `: ${d.reason}` : ''}`);
  lines.push(`  SPF    ${resultWord(spf.result, paint)}  ${spf.domain ?? ''}${spf.reason ? `: ${spf.reason}` : ''}`);
  lines.push(`  DMARC  ${resultWord(dmarc.result, paint)}  ${dmarc.domain ?? ''}${dmarc.policy ? ` (p=${dmarc.policy})` : ''}${dmarc.reason ? `: ${dmarc.reason}` : ''}`);
  lines.push('', paint('bold', 'Headers'));
  for (const h of checks.headers) lines.push(`  ${resultWord(h.result, paint)}  ${h.name}: ${h.message}`);
  lines.push('', paint('bold', 'HTML'));
  const skippedHtml = checks.skipped.find((s) => s.check === 'html');
  if (checks.html === null) lines.push(paint('dim', skippedHtml ? `  Not checked: ${skippedHtml.reason}.` : '  The message has no HTML.'));
  else {
    lines.push(`  score ${checks.html.score}% over ${checks.html.clients} clients`);
    for (const f of checks.html.features) {
      const families = (list: typeof f.unsupported) => list.map((c) => `${c.family} (${c.clients.join(', ')})`).join('; ');
      lines.push(`  ${f.feature}`);
      if (f.unsupported.length > 0) lines.push(`    ${paint('red', 'unsupported')}: ${families(f.unsupported)}`);
      if (f.partial.length > 0) lines.push(`    ${paint('yellow', 'partial')}: ${families(f.partial)}`);
    }
  }
  lines.push('', paint('bold', 'Links'));
  if (checks.links.length === 0) lines.push(paint('dim', '  No links or images.'));
  for (const l of checks.links) {
    const state = !l.checked ? paint('dim', l.error ?? 'unchecked') : l.error ? paint('red', l.error) : paint('green', String(l.status));
    lines.push(`  ${state}  ${l.kind} ${l.url}`);
  }
  lines.push('', paint('bold', 'Spam'));
  const spam = checks.spam;
  if (spam === null || !spam.available) lines.push(paint('dim', `  ${spam?.message ?? 'Not checked.'}`));
  else {
    lines.push(`  score ${spam.score} (threshold ${spam.threshold}): ${spam.is_spam ? paint('red', 'spam') : paint('green', 'not spam')}`);
    for (const r of spam.rules) lines.push(`  ${String(r.score).padStart(6)}  ${r.name}  ${r.description}`);
  }
  return lines.join('\n');
}
