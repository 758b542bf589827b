// Headers on every dashboard response: the page may load only its own script, style and images,
// talk only to its own origin, frame only its own captured-HTML view, and never be framed.
export const DASHBOARD_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/**
 * A file the dashboard downloads (an attachment, a raw message): saved under a safe name (RFC
 * 6266: an ASCII fallback and the UTF-8 name), never sniffed or rendered as a page by the
 * browser, never cached.
 */
export function downloadHeaders(filename: string): Record<string, string> {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
  };
}

export function dashboardHeaders(contentSecurityPolicy = DASHBOARD_POLICY): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': contentSecurityPolicy === DASHBOARD_POLICY ? 'DENY' : 'SAMEORIGIN',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
