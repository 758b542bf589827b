/**
 * ravenctl mcp: a Model Context Protocol server over stdio for the relay at --base-url (CONTRACT
 * section 10). The admin token comes from --admin-token, RAVEN_ADMIN_TOKEN or the data directory;
 * send_email, list_emails and get_email use --api-key / RAVEN_API_KEY. Clients are built on a
 * tool's first use, so a missing token is that tool's error, never a failed start.
 */
import type { Command } from 'commander';
import type { Raven, RavenAdmin } from 'raven-email-sdk';
import { requireApiKey, resolveAdminToken, resolveTarget } from '../config.js';
import { globalsOf, loadSdk } from '../context.js';
import { addHelp } from '../help.js';
import { version } from '../version.js';

interface Options {
  adminToken?: string;
  dataDir?: string;
}

export function register(cmd: Command): void {
  cmd
    .option('--admin-token <token>', 'relay admin token (default: $RAVEN_ADMIN_TOKEN, else the one in --data-dir)')
    .option('--data-dir <dir>', "the local relay's data directory, read for the admin token (default: $RAVEN_DATA_DIR, else ./.raven)");
  cmd.action(async (opts: Options, command: Command) => {
    const globals = globalsOf(command);
    const env = process.env;
    const { runMcpServer } = await import('../mcp/server.js');
    let admin: Promise<RavenAdmin> | undefined;
    let raven: Promise<Raven> | undefined;
    const made: Array<{ close(): Promise<void> }> = [];
    // No retries: a relay that is down or a wrong token should be the tool's answer at once.
    const clientOptions = { logLevel: 'off' as const, maxRetries: 0 };
    const clients = {
      baseUrl: async () => (await resolveTarget(globals, env)).baseUrl,
      admin: () =>
        (admin ??= (async () => {
          const adminToken = await resolveAdminToken(opts.adminToken, opts.dataDir, env);
          const { baseUrl } = await resolveTarget(globals, env);
          const client = new (await loadSdk()).RavenAdmin({ ...clientOptions, adminToken, baseUrl });
          made.push(client);
          return client;
        })()).catch((error: unknown) => {
          admin = undefined; // the next call tries again (the token may have been set meanwhile)
          throw error;
        }),
      raven: () =>
        (raven ??= (async () => {
          const target = await requireApiKey(globals, env);
          const client = new (await loadSdk()).Raven({ ...clientOptions, apiKey: target.apiKey, baseUrl: target.baseUrl });
          made.push(client);
          return client;
        })()).catch((error: unknown) => {
          raven = undefined;
          throw error;
        }),
    };
    try {
      await runMcpServer(clients, version());
    } finally {
      await Promise.allSettled(made.map((c) => c.close()));
    }
  });
  addHelp(cmd, {
    examples: [
      'ravenctl mcp',
      'RAVEN_ADMIN_TOKEN=... RAVEN_API_KEY=rr_test_... ravenctl mcp --base-url http://127.0.0.1:7700',
    ],
  });
}
