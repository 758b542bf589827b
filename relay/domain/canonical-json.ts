// One spelling of a JSON value, whatever the key order and whitespace it arrived with, so that two
// bodies can be compared by a hash (the Idempotency-Key rule's "same request").

/** Canonical form for comparing bodies: keys sorted, no whitespace. */
export function canonicalJson(value: unknown): string {
  // Built by concatenation rather than map and join: every admission with an Idempotency-Key
  // hashes its body's canonical form.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    let out = '{';
    for (let i = 0; i < keys.length; i++) {
      out += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${canonicalJson((value as Record<string, unknown>)[keys[i]!])}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}
