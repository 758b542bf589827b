// Which PostgreSQL failures mean "the storage cannot serve right now" (503, retry later) rather
// than "this statement is wrong" (500): the connection, the server's state or its resources.

// SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57 operator intervention
// (admin shutdown, cannot connect now), 58 system error (I/O).
const FAULT_CLASSES = new Set(['08', '53', '57', '58']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT']);
// node-postgres reports a dropped connection or a pool time-out without a code.
const DRIVER_MESSAGES = /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed|not queryable|Cannot use a pool after calling end/i;

export function isPostgresFault(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return FAULT_CLASSES.has(code.slice(0, 2));
  }
  return typeof message === 'string' && DRIVER_MESSAGES.test(message);
}
