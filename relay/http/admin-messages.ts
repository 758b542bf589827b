// /admin/v1/messages: mail captured by the SMTP sink (CONTRACT section 6).
import { QueryParams } from '../domain/query-params.js';
import { ApiError } from '../errors.js';
import { simulatedOutcome } from '../mail/simulated.js';
import type { RelayServices } from '../services.js';
import { deleteAllCapturedMessages, getCapturedMessage, listCapturedMessages } from '../storage/captured.js';
import { parseHeaders } from '../smtp/headers.js';
import { countRemoteReferences } from '../inbox/html-view.js';
import { attachmentViews, parseMessage } from '../inbox/read-message.js';
import { getInboxEntry } from '../storage/inbox.js';
import { downloadHeaders } from '../dashboard/security-headers.js';
import type { RequestContext } from './context.js';
import type { Handler } from './router.js';

// openapi.yaml (adminListCapturedMessages): limit 1-1000, default 100.
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

function listQuery(ctx: RequestContext): { to?: string; limit: number; matchesNothing: boolean } {
  const query = new QueryParams(ctx.url.searchParams);
  const limit = query.integer('limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT });
  const toValue = query.filter('to');
  let to: string | undefined;
  if (toValue !== undefined) {
    if (toValue.trim() === '') query.details.push({ field: 'to', message: 'must not be empty' });
    else to = toValue.trim();
  }
  const { matchesNothing } = query.finish();
  return to === undefined ? { limit, matchesNothing } : { to, limit, matchesNothing };
}

async function loadMessage(services: RelayServices, id: string) {
  const message = await getCapturedMessage(services.db, id);
  if (!message) throw new ApiError('not_found', `No captured message with id ${id}.`);
  return message;
}

export function adminMessageHandlers(services: RelayServices) {
  return {
    list: async (ctx) => {
      const { matchesNothing, ...query } = listQuery(ctx);
      return { status: 200, body: { messages: matchesNothing ? [] : await listCapturedMessages(services.db, query) } };
    },
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
      // A download (the dashboard saves it as <id>.eml and shows it as text): mail is hostile
      // content, never to be sniffed into HTML or rendered on the relay's origin.
      return { status: 200, raw: { contentType: 'message/rfc822', data: message.raw }, headers: downloadHeaders(`${message.id}.eml`) };
    },
  } satisfies Record<string, Handler>;
}
