// What a webhook attempt kept of the endpoint's answer (issue 25), shown on the webhooks page and
// the email page: the time it took and the first 1 KB of the body, as text.
/** The start of an endpoint's answer, as text, folded under its first line. */
export function AnswerExcerpt({ body, truncated, statusCode }: { body: string | null; truncated: boolean; statusCode: number | null }) {
  // An answer with a status always keeps its text until the email's body is erased (or it came before answers were kept).
  if (body === null && statusCode !== null) return <span class="muted" title="Kept as long as the email's body: 7 days after it became terminal">answer not kept</span>;
  if (body === null) return <span class="muted">no answer</span>;
  if (body === '') return <span class="muted">empty</span>;
  const first = body.split('\n', 1)[0]!;
  return (
    <details class="answer">
      <summary>{first.length > 60 ? `${first.slice(0, 60)}…` : first}</summary>
      <pre class="answer">{body}</pre>
      {truncated ? <div class="muted small">First 1 KB of a longer answer.</div> : null}
    </details>
  );
}

export const took = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
