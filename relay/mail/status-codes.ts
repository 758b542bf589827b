// Enhanced status codes (RFC 3463): what a receiving server's `5.1.1` means to Raven. Read by the
// upstream client from SMTP replies and by the domain from bounce reports (DSNs).

// Permanent failures that say the address does not exist or is disabled (RFC 3463): a hard bounce,
// which suppresses. Other permanent failures (policy, content, a full mailbox) may pass later.
const HARD_BOUNCE_STATUSES = new Set(['5.1.0', '5.1.1', '5.1.2', '5.1.3', '5.1.6', '5.1.10', '5.2.1']);

/** Whether an enhanced status code (`5.1.1`) names a hard bounce. */
export function isHardBounceStatus(enhancedStatus: string | undefined): boolean {
  return enhancedStatus !== undefined && HARD_BOUNCE_STATUSES.has(enhancedStatus);
}
