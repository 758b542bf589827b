/** ravenctl relay messages get <id>: parsed headers, text and html of a captured message. */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';
import { renderFields } from '../../../output.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'captured message id (msg_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay messages get msg_...', 'ravenctl relay messages get msg_... --json | jq -r .text'] },
    async (ctx, admin, _opts, id) => {
      const message = await (await admin()).messages.get(id as string);
      const paint = ctx.out.paint;
      ctx.out.result(message, () =>
        [
          renderFields(
            [
              ['ID', message.id],
              ['Envelope from', message.from],
              ['Envelope to', message.to.join(', ')],
              ['Subject', message.subject ?? ''],
              ['Received', message.received_at],
              ['Size', `${message.size} bytes`],
            ],
            paint,
          ),
          '',
          paint('bold', 'Headers'),
          ...message.headers.map(([name, value]) => `  ${paint('dim', `${name}:`)} ${value}`),
          ...(message.text !== null ? ['', paint('bold', 'Text'), message.text] : []),
          ...(message.html !== null ? ['', paint('bold', 'HTML'), message.html] : []),
        ].join('\n'),
      );
    },
  );
}
