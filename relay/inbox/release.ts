// Release: a captured message sent on, unchanged, to a real address through the configured
// upstream SMTP provider (as Mailpit's release does). Without an upstream there is nowhere to send.
import nodemailer from 'nodemailer';
import type { SmtpUpstreamConfig } from '../config.js';
import { upstreamCa } from '../delivery/upstream.js';

// Network time-outs are real time (CONTRACT section 6).
const TIMEOUT_MS = 30_000;

export async function releaseMessage(upstream: SmtpUpstreamConfig, message: { raw: Buffer; envelopeFrom: string }, to: string): Promise<string> {
  const transport = nodemailer.createTransport({
    host: upstream.host,
    port: upstream.port,
    secure: upstream.secure,
    requireTLS: upstream.requireTLS,
    ...(upstream.auth ? { auth: upstream.auth } : {}),
    // The same trust as delivery: --upstream-ca reaches release too.
    ...(upstream.ca === undefined ? {} : { tls: { ca: upstreamCa(upstream) } }),
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  try {
    const info = await transport.sendMail({ envelope: { from: message.envelopeFrom || undefined, to: [to] }, raw: message.raw });
    return info.response;
  } finally {
    transport.close();
  }
}
