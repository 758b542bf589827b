// The spam check of captured mail: SpamAssassin's score through spamd (the SPAMC protocol: a
// REPORT request, the score, the threshold and the report of the rules that fired). Without
// --spamd the check says how to turn it on; a spamd that is down or slow makes it unavailable,
// never the whole answer.
import net from 'node:net';

export interface SpamCheck {
  available: boolean;
  message: string | null;
  score: number | null;
  threshold: number | null;
  is_spam: boolean | null;
  rules: Array<{ name: string; score: number; description: string }>;
}

/** spamd's own default cap (spamc -s): larger messages are not scored. */
export const MAX_SPAMD_BYTES = 500 * 1024;
const TIMEOUT_MS = 15_000;
/** The answer is a report of a few KB; more is not spamd. */
const MAX_ANSWER_BYTES = 1024 * 1024;

const unavailable = (message: string): SpamCheck => ({ available: false, message, score: null, threshold: null, is_spam: null, rules: [] });

export const SPAMD_OFF: SpamCheck = unavailable('Start the relay with --spamd HOST:PORT (or RAVEN_SPAMD) to score messages with SpamAssassin.');

function talk(address: string, raw: Buffer): Promise<string> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const socket = net.connect({ host, port }, () => {
      socket.write(`REPORT SPAMC/1.5\r\nContent-length: ${raw.length}\r\n\r\n`);
      socket.end(raw);
    });
    socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error(`spamd did not answer within ${TIMEOUT_MS / 1000} s`)));
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) socket.destroy(new Error('spamd answered more than 1 MB'));
      else chunks.push(chunk);
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Parses spamd's REPORT answer: `SPAMD/1.1 0 EX_OK`, `Spam: True ; 1003.5 / 5.0`, then the rule table. */
export function parseSpamdReport(answer: string): SpamCheck {
  const status = /^SPAMD\/[\d.]+ (\d+) (\S+)/.exec(answer);
  if (!status) return unavailable('spamd gave an answer that is not SPAMD protocol');
  if (status[1] !== '0') return unavailable(`spamd refused the message: ${status[2]}`);
  const verdict = /^Spam: (True|False|Yes|No) ; (-?[\d.]+) \/ (-?[\d.]+)/im.exec(answer);
  if (!verdict) return unavailable('spamd gave no score');
  const rules: SpamCheck['rules'] = [];
  const table = answer.split(/^-{4} -{5,}.*$/m)[1] ?? '';
  for (const line of table.split(/\r?\n/)) {
    const m = /^\s*(-?[\d.]+)\s+([A-Z0-9_]+)\s+(.*)$/.exec(line);
    if (m) rules.push({ name: m[2]!, score: Number(m[1]), description: m[3]!.trim() });
    else if (/^\s{20,}\S/.test(line) && rules.length > 0) rules[rules.length - 1]!.description += ` ${line.trim()}`;
  }
  const score = Number(verdict[2]);
  const threshold = Number(verdict[3]);
  return { available: true, message: null, score, threshold, is_spam: /^(true|yes)$/i.test(verdict[1]!), rules };
}

export async function checkSpam(spamd: string | undefined, raw: Buffer): Promise<SpamCheck> {
  if (spamd === undefined) return SPAMD_OFF;
  if (raw.length > MAX_SPAMD_BYTES) return unavailable(`The message is ${raw.length} bytes; spamd scores messages up to ${MAX_SPAMD_BYTES} bytes.`);
  try {
    return parseSpamdReport(await talk(spamd, raw));
  } catch (error) {
    return unavailable(`spamd at ${spamd} is unavailable: ${(error as Error).message}`);
  }
}
