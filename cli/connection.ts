/**
 * The undici dispatcher ravenctl gives the SDK: an ordinary keep-alive Agent that also watches
 * each connection attempt. Two failures will not heal while the SDK's retries wait (up to
 * seconds), and a person wants to know at once what to do about them:
 * - connection refused: nothing listens at the base URL (the relay is not running);
 * - a TLS handshake answered in plain text: an https:// base URL for a plain-HTTP relay.
 * The SDK's retry rules stay as they are; the command fails the moment one of these happens.
 */
import { Agent, buildConnector } from 'undici';
import { NetworkError } from './errors.js';

export interface WatchedDispatcher {
  dispatcher: Agent;
  /** Rejects with the NetworkError to report when a connection attempt failed in one of these ways. */
  failure: Promise<never>;
}

export function watchConnections(baseUrl: string): WatchedDispatcher {
  let fail!: (error: NetworkError) => void;
  const failure = new Promise<never>((_, reject) => (fail = reject));
  failure.catch(() => {}); // only read when raced; never an unhandled rejection
  const connect = buildConnector({});
  const dispatcher = new Agent({
    keepAliveTimeout: 10_000,
    connect: (options, callback) =>
      connect(options, (error, socket) => {
        const verdict = error ? diagnose(error, baseUrl) : undefined;
        if (verdict) fail(verdict);
        if (error) callback(error, null);
        else callback(null, socket!);
      }),
  });
  return { dispatcher, failure };
}

function codesOf(error: Error): string[] {
  const nested = (error as Error & { errors?: Error[] }).errors ?? [];
  return [error, ...nested].map((e) => String((e as NodeJS.ErrnoException).code ?? ''));
}

/** The error to report for a failed connection attempt, or undefined to leave it to the SDK. */
export function diagnose(error: Error, baseUrl: string): NetworkError | undefined {
  const codes = codesOf(error);
  if (codes.includes('ECONNREFUSED')) {
    return new NetworkError(
      'connection_error',
      `relay not reachable at ${baseUrl}: start it with npm run relay, or set --base-url / RAVEN_BASE_URL`,
      { cause: error },
    );
  }
  if (codes.some((code) => code.startsWith('ERR_SSL_')) || /wrong version number|packet length too long/i.test(error.message)) {
    const url = new URL(baseUrl);
    return new NetworkError(
      'connection_error',
      `${baseUrl} did not answer TLS: it speaks plain HTTP (the relay does); use http://${url.host} or put HTTPS in front of it`,
      { cause: error },
    );
  }
  return undefined;
}
