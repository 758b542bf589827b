// The client of the relay's outbound HTTP (webhook deliveries, link checks): undici, every
// connection through the URL policy's guard. A module of its own, imported on the first request:
// undici is a hundred files to load, and a relay that sends no webhook and checks no link (most
// starts: a developer's, a test's) never needs it.
import net, { type LookupFunction } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { addressRefusal, createGuardedLookup, UrlPolicyError } from './url-policy.js';

/** An agent whose every connection goes through the guard, and the request function to use it with. */
export interface GuardedClient {
  agent: Agent;
  request: typeof request;
}

/** A client for outbound requests to `allowLocal`'s addresses, connecting within `timeoutMs`. */
export function guardedClient(allowLocal: boolean, timeoutMs: number, options: Omit<Agent.Options, 'connect'> = {}): GuardedClient {
  return { agent: new Agent({ ...options, connect: createGuardedConnector(allowLocal, timeoutMs) }), request };
}

/**
 * An undici connector that applies the policy to the address each connection really uses: IP
 * literals before connecting, host names through createGuardedLookup, and the socket's remote
 * address once connected (a last check that does not depend on how the address was found).
 */
export function createGuardedConnector(
  allowLocal: boolean,
  connectTimeoutMs: number,
  lookup: LookupFunction = createGuardedLookup(allowLocal),
): buildConnector.connector {
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) !== 0) {
      const why = addressRefusal(host, allowLocal);
      if (why) {
        callback(new UrlPolicyError(`refused: ${host} is ${why}`), null);
        return;
      }
    }
    connect(options, (err, socket) => {
      if (err || !socket) {
        callback(err ?? new Error('connection failed'), null);
        return;
      }
      const remote = socket.remoteAddress;
      const why = remote ? addressRefusal(remote, allowLocal) : 'an unknown address';
      if (why) {
        socket.destroy();
        callback(new UrlPolicyError(`refused: connected to ${why} (${remote ?? '?'})`), null);
        return;
      }
      callback(null, socket);
    });
  };
}
