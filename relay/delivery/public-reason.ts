// Why a recipient is waiting, in words the public API may show (the delayed event's `reason`,
// `ravenctl emails get`): a fixed phrase chosen by the error's code, never the server's own reply
// or an error message (which may quote it, or name a login), as the read API forbids (CONTRACT
// section 3: no raw SMTP reply in payloads). The full diagnostic stays in the log and the admin
// attempts view.

/** Node's certificate verification codes, by what an operator does about them. */
const TLS_REASONS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: self-signed certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: certificate issuer not trusted',
  UNABLE_TO_GET_ISSUER_CERT: 'TLS: certificate issuer not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS: certificate issuer not trusted',
  CERT_HAS_EXPIRED: 'TLS: certificate expired',
  CERT_NOT_YET_VALID: 'TLS: certificate not yet valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: certificate does not match the host name',
};

const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EAUTH: 'login refused by the upstream',
  ETLS: 'TLS: could not start TLS',
};

/** What nodemailer and node:net/tls report: a code (nodemailer's own, the system's kept as originalCode), maybe a reply code. */
export interface DeliveryFailure {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  message?: string;
}

/**
 * The reason of a deferral. Certificate problems are recognised by code, or by Node's fixed
 * messages when a wrapper dropped the code (they are OpenSSL's words, never the server's).
 */
export function publicReason(failure: DeliveryFailure, enhancedCode?: string): string | undefined {
  if (failure.responseCode !== undefined) {
    const kind = failure.responseCode >= 500 ? 'refused' : 'temporarily refused';
    return `${kind} by the server: ${failure.responseCode}${enhancedCode ? ` ${enhancedCode}` : ''}`;
  }
  for (const code of [failure.originalCode, failure.code]) {
    if (code !== undefined && TLS_REASONS[code]) return TLS_REASONS[code];
  }
  const message = failure.message ?? '';
  if (/self[- ]signed certificate in certificate chain/i.test(message)) return TLS_REASONS.SELF_SIGNED_CERT_IN_CHAIN;
  if (/self[- ]signed certificate/i.test(message)) return TLS_REASONS.DEPTH_ZERO_SELF_SIGNED_CERT;
  if (/unable to (verify|get) (the first|issuer|local issuer) certificate/i.test(message)) return TLS_REASONS.UNABLE_TO_GET_ISSUER_CERT;
  if (/certificate has expired/i.test(message)) return TLS_REASONS.CERT_HAS_EXPIRED;
  if (/altnames|does not match certificate/i.test(message)) return TLS_REASONS.ERR_TLS_CERT_ALTNAME_INVALID;
  for (const code of [failure.originalCode, failure.code]) {
    if (code !== undefined && CONNECTION_REASONS[code]) return CONNECTION_REASONS[code];
  }
  return failure.code === 'ECONNECTION' || failure.code === 'ESOCKET' ? 'connection failed' : undefined;
}
