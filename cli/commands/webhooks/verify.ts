/** ravenctl webhooks verify: is this payload authentic and fresh? Exit 0 yes, 1 no (with the reason). */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { action } from '../../context.js';
import { RefusedError } from '../../errors.js';
import { addHelp } from '../../help.js';
import { readBody } from '../../io.js';

interface Options {
  /** Every --secret given: during a rotation, the new one and the old one. */
  secret: string[];
  timestamp: string;
  signature: string;
  bodyFile?: string;
  tolerance: number;
  now?: number;
}

function parseSeconds(flag: string) {
  return (value: string): number => {
    if (!/^\d{1,15}$/.test(value)) throw new InvalidArgumentError(`${flag} must be a whole number of seconds.`);
    return Number(value);
  };
}

export const VERIFY_REASONS = ['missing_header', 'bad_format', 'bad_signature', 'timestamp_too_old', 'timestamp_too_new'] as const;

export function register(cmd: Command): void {
  cmd
    .addOption(
      new Option('--secret <secret>', 'signing secret of the endpoint (repeat it to accept several, e.g. during a rotation)')
        .env('RAVEN_WEBHOOK_SECRET')
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
        .makeOptionMandatory(),
    )
    .requiredOption('--timestamp <unix-seconds>', 'value of the Service-Timestamp header')
    .requiredOption('--signature <v1=hex>', 'value of the Service-Signature header (several v1= entries may be comma separated)')
    .option('--body-file <file>', 'raw request body (default: stdin; "-" for stdin)')
    .option('--tolerance <seconds>', 'largest accepted clock difference, either way', parseSeconds('--tolerance'), 300)
    .option('--now <unix-seconds>', 'verify as if the current time were this (for recorded payloads)', parseSeconds('--now'))
    .action(
      action<Options>(async (ctx, opts) => {
        const body = await readBody(opts.bodyFile);
        const { verifyWebhook, WebhookVerificationError } = await ctx.sdk();
        const headers = { 'Service-Timestamp': opts.timestamp, 'Service-Signature': opts.signature };
        let event: unknown = null;
        try {
          event = verifyWebhook(body, headers, opts.secret, {
            toleranceSeconds: opts.tolerance,
            ...(opts.now === undefined ? {} : { now: opts.now }),
          });
        } catch (err) {
          if (!(err instanceof WebhookVerificationError)) throw err;
          // verifyWebhook checks the header formats, then the signature, then the timestamp, and
          // only then parses the body: a bad_format with well-formed headers means an authentic
          // body that is not JSON. The signature is valid; there is just no event to show.
          if (!(err.reason === 'bad_format' && wellFormed(opts.timestamp, opts.signature))) {
            throw new RefusedError(err.reason, err.message);
          }
        }
        ctx.out.result({ valid: true, event }, () => 'signature valid');
      }),
    );
  addHelp(cmd, {
    examples: [
      'ravenctl webhooks verify --secret whsec_... --timestamp 1614265330 --signature v1=0985... --body-file body.json',
      'cat body.json | ravenctl webhooks verify --secret whsec_... --timestamp "$TS" --signature "$SIG" --json',
    ],
    refused: VERIFY_REASONS,
    network: false,
  });
}

function wellFormed(timestamp: string, signature: string): boolean {
  return (
    /^\d{1,15}$/.test(timestamp.trim()) &&
    signature.split(',').some((s) => /^v1=[0-9a-f]{64}$/.test(s.trim()))
  );
}
