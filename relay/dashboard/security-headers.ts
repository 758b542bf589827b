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
