// The built dashboard (dist/web, from `npm run build`), read once at start and kept in memory
// with its gzip and brotli forms, so a page load costs no disk read and no compression.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';

export interface StaticFile {
  contentType: string;
  etag: string;
  /** Hashed asset names never change content: cached for a year; index.html is revalidated. */
  immutable: boolean;
  identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

/** dist/web of the package this module belongs to, from relay/ (tsx) or dist/relay/ (built). */
async function findWebRoot(): Promise<string | undefined> {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'dist', 'web');
    if (await stat(path.join(candidate, 'index.html')).then(() => true, () => false)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

async function listFiles(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(root, full)));
    else out.push(full);
  }
  return out;
}

/** URL path -> file; undefined when the dashboard was not built. */
export async function loadStaticFiles(root?: string): Promise<Map<string, StaticFile> | undefined> {
  const webRoot = root ?? (await findWebRoot());
  if (!webRoot) return undefined;
  const files = new Map<string, StaticFile>();
  for (const full of await listFiles(webRoot)) {
    const ext = path.extname(full).toLowerCase();
    const urlPath = `/${path.relative(webRoot, full).split(path.sep).join('/')}`;
    const identity = await readFile(full);
    const compressible = COMPRESSIBLE.has(ext) && identity.length > 256;
    files.set(urlPath, {
      contentType: TYPES[ext] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`,
      immutable: urlPath.startsWith('/assets/'),
      identity,
      ...(compressible
        ? {
            gzip: gzipSync(identity, { level: 9 }),
            br: brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
          }
        : {}),
    });
  }
  return files;
}

/** The body and Content-Encoding for an Accept-Encoding header (brotli, then gzip, then none). */
export function negotiate(file: StaticFile, acceptEncoding: string | undefined): { data: Buffer; encoding?: 'br' | 'gzip' } {
  const accepted = (acceptEncoding ?? '').toLowerCase();
  if (file.br && /\bbr\b/.test(accepted)) return { data: file.br, encoding: 'br' };
  if (file.gzip && /\bgzip\b/.test(accepted)) return { data: file.gzip, encoding: 'gzip' };
  return { data: file.identity };
}
