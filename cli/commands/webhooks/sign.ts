/** ravenctl webhooks sign: the headers the service would send with a payload. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { action } from '../../context.js';
import { addHelp } from '../../help.js';
import { readBody } from '../../io.js';

interface Options {
  secret: string;
  bodyFile?: string;
  timestamp?: number;
}

function parseTimestamp(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new InvalidArgumentError('--timestamp must be unix seconds (digits only).');
  return Number(value);
}

export function register(cmd: Command): void {
  cmd
    .addOption(new Option('--secret <secret>', 'signing secret, used literally as UTF-8').env('RAVEN_WEBHOOK_SECRET').makeOptionMandatory())
    .option('--body-file <file>', 'raw body to sign (default: stdin; "-" for stdin)')
    .option('--timestamp <unix-seconds>', 'timestamp to sign with (default: now)', parseTimestamp)
    .action(
      action<Options>(async (ctx, opts) => {
        const body = await readBody(opts.bodyFile);
        const { signWebhook } = await ctx.sdk();
        const signed = signWebhook(body, opts.secret, opts.timestamp === undefined ? {} : { timestamp: opts.timestamp });
        ctx.out.result({ timestamp: signed.timestamp, signature: signed.signature }, () =>
          [`Service-Timestamp: ${signed.timestamp}`, `Service-Signature: ${signed.signature}`].join('\n'),
        );
      }),
    );
  addHelp(cmd, {
    examples: [
      "echo -n '{\"id\":\"evt_01\"}' | ravenctl webhooks sign --secret whsec_test_secret",
      'ravenctl webhooks sign --secret whsec_test_secret --timestamp 1614265330 --body-file event.json',
      'ravenctl webhooks sign --secret whsec_test_secret --body-file event.json --json',
    ],
    network: false,
  });
}
