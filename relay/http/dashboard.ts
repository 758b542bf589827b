// The dashboard's own paths: `/` (the single page; it routes in the URL fragment) and its hashed
// assets. They never shadow /v1, /admin/v1 or the operations endpoints (CONTRACT section 8).
import { dashboardHeaders } from '../dashboard/security-headers.js';
import { loadStaticFiles, negotiate, type StaticFile } from '../dashboard/static-files.js';
import { ApiError } from '../errors.js';
import type { RelayServices } from '../services.js';
import type { Reply, RequestContext } from './context.js';
import type { Handler } from './router.js';

const NOT_BUILT = '<!doctype html><title>Raven</title><p>The dashboard is not built: run <code>npm run build</code>.</p>';

export function dashboardHandlers(s: RelayServices) {
  let files: Promise<Map<string, StaticFile> | undefined> | undefined;
  const load = () => {
    files ??= loadStaticFiles().catch((error: unknown) => {
      s.log.error('http', 'cannot read the dashboard files', { error: (error as Error).message });
      return undefined;
    });
    return files;
  };

  const serve = async (ctx: RequestContext, urlPath: string): Promise<Reply> => {
    const all = await load();
    if (!all) {
      if (urlPath !== '/index.html') throw new ApiError('not_found', `No route for GET ${ctx.url.pathname}.`);
      return { status: 200, raw: { contentType: 'text/html; charset=utf-8', data: NOT_BUILT }, headers: dashboardHeaders() };
    }
    const file = all.get(urlPath);
    if (!file) throw new ApiError('not_found', `No route for GET ${ctx.url.pathname}.`);
    const headers: Record<string, string> = {
      ...dashboardHeaders(),
      'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      ETag: file.etag,
      Vary: 'Accept-Encoding',
    };
    if (ctx.req.headers['if-none-match'] === file.etag) return { status: 304, headers };
    const { data, encoding } = negotiate(file, ctx.req.headers['accept-encoding']);
    if (encoding) headers['Content-Encoding'] = encoding;
    return { status: 200, raw: { contentType: file.contentType, data }, headers };
  };

  return {
    index: (ctx) => serve(ctx, '/index.html'),
    asset: (ctx) => serve(ctx, `/assets/${ctx.params.file}`),
    favicon: (ctx) => serve(ctx, '/favicon.svg'),
  } satisfies Record<string, Handler>;
}
