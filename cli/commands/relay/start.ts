/**
 * ravenctl relay start: run the relay in the foreground until SIGINT/SIGTERM.
 * The relay (and sqlite3, smtp-server, ...) is imported only here, only when this command runs.
 */
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_BASE_URL, DEFAULT_DATA_DIR } from '../../config.js';
import { action } from '../../context.js';
import { CliError, ExitCode, InterruptedError } from '../../errors.js';
import { addHelp } from '../../help.js';
import { renderFields, shellWord } from '../../output.js';
import { SETTINGS, type Setting, type SettingFlags } from '../../../relay/settings-table.js';

type Options = Partial<SettingFlags>;

/** What the banner says of the submission port's TLS. */
const SUBMISSION_TLS = { starttls: 'STARTTLS', implicit: 'implicit TLS', none: 'no TLS' } as const;

/** How long a graceful stop may take before the process exits anyway. */
const FORCED_EXIT_MS = 10_000;

function parsePort(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) > 65_535) throw new InvalidArgumentError(`${flag} must be 0-65535 (0 picks a free port).`);
    return Number(value);
  };
}

/** Repeatable flags collect into a list (undefined until given, so the file and env still apply). */
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function register(cmd: Command): void {
  // One option per setting that has a flag (relay/settings-table.ts), in the table's order.
  for (const row of SETTINGS as readonly Setting[]) {
    if (!row.flag) continue;
    if (row.kind === 'port') cmd.option(row.flag, row.help ?? '', parsePort(row.flag.split(' ')[0]!));
    else if (row.kind === 'strings') cmd.option(row.flag, row.help ?? '', collect);
    else cmd.option(row.flag, row.help ?? '');
  }
  cmd
    .action(action<Options>(async (ctx, opts) => {
      const flags: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(opts)) if (value !== undefined) flags[key] = value;

      const { startRelay } = await import('../../../relay/app.js');
      // Start-up reads as one banner, then logs: lines logged while starting wait until the banner
      // is out (or the start failed, whose logs then come before its error).
      const logs = heldLines((line) => process.stderr.write(line));
      let relay: Awaited<ReturnType<typeof startRelay>>;
      try {
        relay = await startRelay({ flags, env: process.env, logWrite: logs.write });
      } catch (error) {
        logs.release();
        throw error;
      }

      const http = new URL(relay.httpUrl);
      const smtpUrlOf = (host: string, port: number) => `smtp://${host.includes(':') ? `[${host}]` : host}:${port}`;
      const smtpUrl = smtpUrlOf(relay.smtpHost, relay.smtpPort);
      const submissionUrl = smtpUrlOf(relay.submission.host, relay.submission.port);
      const b = relay.bootstrap;
      const newKey = newKeyCommand(relay);
      const result = {
        status: 'ready',
        http_url: relay.httpUrl,
        smtp_url: smtpUrl,
        dashboard_url: relay.dashboardUrl,
        host: http.hostname,
        port: Number(http.port),
        smtp_host: relay.smtpHost,
        smtp_port: relay.smtpPort,
        submission_url: submissionUrl,
        submission_port: relay.submission.port,
        data_dir: relay.dataDir,
        admin_token_file: relay.adminTokenFile,
        ...(relay.adminTokenGenerated ? { admin_token: relay.adminToken } : {}),
        new_key_command: newKey,
        bootstrap: b
          ? { workspace_id: b.workspaceId, project_id: b.projectId, domain: b.domain, key_id: b.keyId, api_key: b.apiKey }
          : null,
      };
      // Listen for signals before announcing readiness: a supervisor may signal at once.
      const stopped = untilStopped(relay.stop.bind(relay), ctx.out.json ? () => {} : (m) => process.stderr.write(`${m}\n`));
      const paint = ctx.out.paint;
      // Every start says where the credentials are, so a lost terminal never loses them.
      const token = relay.adminTokenFile
        ? relay.adminTokenGenerated
          ? `${relay.adminToken} (stored in ${relay.adminTokenFile})`
          : `stored in ${relay.adminTokenFile}`
        : relay.config.adminToken
          ? 'set by --admin-token, RAVEN_ADMIN_TOKEN or --config'
          : relay.adminTokenGenerated
            ? `${relay.adminToken} (stored in the database)`
            : 'stored in the database (printed by the start that made it)';
      ctx.out.result(result, () =>
        [
          paint('green', 'Raven relay ready'),
          renderFields(
            [
              ['  HTTP', relay.httpUrl],
              ['  SMTP', smtpUrl],
              ['  Submission', `${submissionUrl}  (${SUBMISSION_TLS[relay.submission.tls]}; user raven, an API key as password)`],
              ['  Data', relay.dataDir],
              ['  Dashboard', `${relay.dashboardUrl}  (a one-time sign-in link, 15 minutes)`],
              ['  Admin token', token],
              ['  New API key', newKey],
            ],
            paint,
          ),
          ...(b
            ? [
                `  API key (shown once): ${b.apiKey}`,
                renderFields(
                  [
                    ['  Workspace', b.workspaceId],
                    ['  Project', b.projectId],
                    ['  Domain', b.domain],
                    ['  Key id', b.keyId],
                  ],
                  paint,
                ),
              ]
            : []),
        ].join('\n'),
      );
      ctx.out.hint('Press Ctrl-C to stop.');
      logs.release();

      await stopped;
    }));
  addHelp(cmd, {
    examples: [
      'ravenctl relay start',
      'ravenctl relay start --data-dir ./data --port 0 --smtp-port 0 --json',
      'ravenctl relay start --test-clock --admin-token dev-token --domain mail.example.test',
      'ravenctl relay start --upstream smtps://user:pass@smtp.example.com:465',
      'ravenctl relay start --config /etc/raven/raven.json --dns-server 127.0.0.1:5353',
    ],
    refused: ['address_in_use', 'config_invalid', 'internal_error'],
    network: false,
  });
}

/**
 * The command that makes another API key on this relay, with the flags it needs when the relay
 * is not on the defaults the CLI assumes (./.raven, http://127.0.0.1:7700).
 */
function newKeyCommand(relay: { dataDir: string; httpUrl: string; adminTokenFile: string | null }): string {
  const words = ['npx ravenctl relay keys create --name NAME'];
  // A token the configuration gave (RAVEN_ADMIN_TOKEN from an environment file, as the README
  // recommends) is in no file the CLI could read: name the variable, never print the secret. The
  // shell expands it even when the file was sourced without exporting it.
  if (relay.adminTokenFile === null) words.push('--admin-token "$RAVEN_ADMIN_TOKEN"');
  else if (path.resolve(relay.dataDir) !== path.resolve(DEFAULT_DATA_DIR)) words.push(`--data-dir ${shellWord(relay.dataDir)}`);
  if (relay.httpUrl !== DEFAULT_BASE_URL) words.push(`--base-url ${relay.httpUrl}`);
  return words.join(' ');
}

/** Lines kept until release(), then written through as they come. */
function heldLines(write: (line: string) => void): { write: (line: string) => void; release: () => void } {
  let held: string[] | undefined = [];
  return {
    write: (line) => (held ? held.push(line) : write(line)),
    release: () => {
      const lines = held ?? [];
      held = undefined;
      for (const line of lines) write(line);
    },
  };
}

/**
 * Resolve after a graceful stop on the first SIGINT/SIGTERM. A second signal, or a stop that
 * takes longer than FORCED_EXIT_MS, rejects so main exits at once.
 */
function untilStopped(stop: () => Promise<void>, log: (message: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        reject(new InterruptedError(`${signal} again: exiting without finishing the shutdown`));
        return;
      }
      stopping = true;
      log(`${signal}: stopping the relay (send it again to force)`);
      const timer = setTimeout(() => {
        reject(new CliError('shutdown_timeout', `the relay did not stop within ${FORCED_EXIT_MS / 1000} s`, ExitCode.refused));
      }, FORCED_EXIT_MS);
      timer.unref();
      stop().then(
        () => {
          clearTimeout(timer);
          log('relay stopped');
          resolve();
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
