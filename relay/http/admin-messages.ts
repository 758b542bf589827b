// /admin/v1/messages: mail captured by the SMTP sink (CONTRACT section 6).
import { ApiError, validationError } from '../errors.js';
import { simulatedOutcome } from '../mail/simulated.js';
import type { RelayServices } from '../services.js';
import { deleteAllCapturedMessages, getCapturedMessage, listCapturedMessages } from '../storage/captured.js';
import { parseHeaders } from '../smtp/headers.js';
import { countRemoteReferences } from '../inbox/html-view.js';
import { attachmentViews, parseMessage } from '../inbox/read-message.js';
import { getInboxEntry } from '../storage/inbox.js';
import type { RequestContext } from './context.js';
import type { Handler } from './router.js';

// openapi.yaml (adminListCapturedMessages): limit 1-1000, default 100.
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

function listQuery(ctx: RequestContext): { to?: string; limit: number } {
  const params = ctx.url.searchParams;
  const details = [];
  const limitValues = params.getAll('limit');
  let limit = DEFAULT_LIMIT;
  if (limitValues.length > 1) details.push({ field: 'limit', message: 'must be given at most once' });
  else if (limitValues.length === 1) {
    const raw = limitValues[0]!;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIMIT) {
      details.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
    } else limit = Number(raw);
  }
  const toValues = params.getAll('to');
  let to: string | undefined;
  if (toValues.length > 1) details.push({ field: 'to', message: 'must be given at most once' });
  else if (toValues.length === 1) {
    if (toValues[0]!.trim() === '') details.push({ field: 'to', message: 'must not be empty' });
    else to = toValues[0]!.trim();
  }
  if (details.length > 0) throw validationError(details);
  return to === undefined ? { limit } : { to, limit };
}

async function loadMessage(services: RelayServices, id: string) {
  const message = await getCapturedMessage(services.db, id);
  if (!message) throw new ApiError('not_found', `No captured message with id ${id}.`);
  return message;
}

export function adminMessageHandlers(services: RelayServices) {
  return {
    list: async (ctx) => ({
      status: 200,
      body: { messages: await listCapturedMessages(services.db, listQuery(ctx)) },
    }),
    deleteAll: async () => {
      await services.db.write((tx) => deleteAllCapturedMessages(tx));
      return { status: 204 };
    },
    get: async (ctx) => {
      const { raw, email_id, ...summary } = await loadMessage(services, ctx.params.message_id!);
      const [parsed, entry] = await Promise.all([parseMessage(raw), getInboxEntry(services.db, summary.id)]);
      const html = typeof parsed.html === 'string' && parsed.html !== '' ? parsed.html : null;
      return {
        status: 200,
        body: {
          ...summary,
          headers: parseHeaders(raw),
          text: parsed.text || null,
          html,
          email_id,
          read: entry?.read ?? false,
          attachments: attachmentViews(parsed),
          remote_resources: html === null ? 0 : countRemoteReferences(html),
          simulated_outcomes: summary.to
            .map((recipient) => ({ recipient, outcome: simulatedOutcome(recipient) }))
            .filter((o) => o.outcome !== 'delivered'),
        },
      };
    },
    raw: async (ctx) => {
      const message = await loadMessage(services, ctx.params.message_id!);
      return { status: 200, raw: { contentType: 'message/rfc822', data: message.raw } };
    },
  } satisfies Record<string, Handler>;
}
