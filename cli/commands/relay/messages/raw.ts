/**
 * ravenctl relay messages raw <id>: the message/rfc822 source, byte for byte, on stdout
 * (so `> message.eml` works). Only an explicit --json wraps it as {"id","raw"}.
 */
import type { Command } from 'commander';
import { adminAction } from '../../../admin.js';

export function register(cmd: Command): void {
  cmd.argument('<id>', 'captured message id (msg_...)');
  adminAction<{ adminToken?: string }>(
    cmd,
    { examples: ['ravenctl relay messages raw msg_... > message.eml'] },
    async (ctx, admin, _opts, id) => {
      const raw = await (await admin()).messages.raw(id as string);
      if (ctx.globals.json === true) ctx.out.result({ id, raw }, () => raw);
      else process.stdout.write(raw);
    },
  );
}
