/**
 * The ravenctl command tree. Leaf commands live one per file in commands/<noun>/<verb>.ts and are
 * imported only when argv selects them, so a command loads commander and its own leaf only.
 * Other leaves appear in group help through their one-line summary from the table below.
 */
import { Command, Option } from 'commander';
import { version } from './version.js';

export interface LeafModule {
  /** `tree` is for the leaves that read the whole command tree (completion): they never import this module. */
  register(cmd: Command, tree: CommandTree): void;
}

export interface CommandTree {
  /** Loads every leaf's full definition into the program the leaf belongs to. */
  loadAllLeaves(): Promise<void>;
}

interface Leaf {
  path: string[];
  summary: string;
  load: () => Promise<LeafModule>;
  /** Runs until stopped (a server, a stream) rather than making a few requests and exiting. */
  serves?: true;
}

/** Group commands and what they hold. */
const GROUPS: Record<string, string> = {
  emails: 'Read emails sent with your key',
  webhooks: 'Sign and verify webhook payloads',
  relay: 'Run a self-hosted relay and manage it (the dashboard operations)',
  'relay workspaces': 'Create, list and activate workspaces',
  'relay projects': 'Create and list projects of a workspace',
  'relay domains': 'Connect, list and verify sender domains',
  'relay keys': 'Create, list and revoke API keys',
  'relay suppressions': 'List, add and remove workspace suppressions',
  'relay webhooks': 'Manage webhook endpoints and see their deliveries',
  'relay messages': 'Read the mail captured by the relay sink',
  'relay emails': 'Look into the delivery of an email (attempts, SMTP conversations)',
  'relay clock': 'Read and advance the test clock (relay started with --test-clock)',
};

/** Every leaf command, in help order. */
export const LEAVES: Leaf[] = [
  { path: ['send'], summary: 'Send an email', load: () => import('./commands/send.js') },
  { path: ['emails', 'list'], summary: 'List emails, newest first', load: () => import('./commands/emails/list.js') },
  { path: ['emails', 'get'], summary: 'Show one email: recipients and event timeline', load: () => import('./commands/emails/get.js') },
  { path: ['webhooks', 'verify'], summary: 'Verify a webhook signature', load: () => import('./commands/webhooks/verify.js') },
  { path: ['webhooks', 'sign'], summary: 'Sign a payload the way the service does', load: () => import('./commands/webhooks/sign.js') },
  { path: ['listen'], summary: 'Forward live events to a local URL, signed', load: () => import('./commands/listen.js'), serves: true },
  { path: ['mcp'], summary: 'Serve the relay to an AI agent: a Model Context Protocol server over stdio', load: () => import('./commands/mcp.js'), serves: true },
  { path: ['login'], summary: 'Store an API key in a named profile', load: () => import('./commands/login.js') },
  { path: ['completion'], summary: 'Print a shell completion script (bash, zsh, fish)', load: () => import('./commands/completion.js') },
  { path: ['trigger'], summary: 'Make a real event of a type on the local relay (simulated outcomes)', load: () => import('./commands/trigger.js') },
  { path: ['relay', 'start'], summary: 'Start a relay (HTTP API, SMTP sink, worker)', load: () => import('./commands/relay/start.js'), serves: true },
  { path: ['relay', 'workspaces', 'create'], summary: 'Create a workspace', load: () => import('./commands/relay/workspaces/create.js') },
  { path: ['relay', 'workspaces', 'list'], summary: 'List workspaces', load: () => import('./commands/relay/workspaces/list.js') },
  { path: ['relay', 'workspaces', 'activate'], summary: 'Activate a workspace for production', load: () => import('./commands/relay/workspaces/activate.js') },
  { path: ['relay', 'projects', 'create'], summary: 'Create a project', load: () => import('./commands/relay/projects/create.js') },
  { path: ['relay', 'projects', 'list'], summary: 'List the projects of a workspace', load: () => import('./commands/relay/projects/list.js') },
  { path: ['relay', 'domains', 'add'], summary: 'Connect a sender domain to a project', load: () => import('./commands/relay/domains/add.js') },
  { path: ['relay', 'domains', 'list'], summary: 'List the domains of a project', load: () => import('./commands/relay/domains/list.js') },
  { path: ['relay', 'domains', 'verify'], summary: 'Check DNS and verify a domain', load: () => import('./commands/relay/domains/verify.js') },
  { path: ['relay', 'keys', 'create'], summary: 'Create an API key (its secret is shown once)', load: () => import('./commands/relay/keys/create.js') },
  { path: ['relay', 'keys', 'list'], summary: 'List the API keys of a project', load: () => import('./commands/relay/keys/list.js') },
  { path: ['relay', 'keys', 'revoke'], summary: 'Revoke an API key', load: () => import('./commands/relay/keys/revoke.js') },
  { path: ['relay', 'suppressions', 'list'], summary: 'List suppressed addresses', load: () => import('./commands/relay/suppressions/list.js') },
  { path: ['relay', 'suppressions', 'add'], summary: 'Suppress an address (reason manual)', load: () => import('./commands/relay/suppressions/add.js') },
  { path: ['relay', 'suppressions', 'remove'], summary: 'Remove a suppression', load: () => import('./commands/relay/suppressions/remove.js') },
  { path: ['relay', 'webhooks', 'create'], summary: 'Create a webhook endpoint (its secret is shown once)', load: () => import('./commands/relay/webhooks/create.js') },
  { path: ['relay', 'webhooks', 'list'], summary: 'List the webhook endpoints of a project', load: () => import('./commands/relay/webhooks/list.js') },
  { path: ['relay', 'webhooks', 'delete'], summary: 'Delete a webhook endpoint', load: () => import('./commands/relay/webhooks/delete.js') },
  { path: ['relay', 'webhooks', 'rotate-secret'], summary: 'Rotate the signing secret of an endpoint (the old one signs too meanwhile)', load: () => import('./commands/relay/webhooks/rotate-secret.js') },
  { path: ['relay', 'webhooks', 'disable'], summary: 'Send nothing to an endpoint (its deliveries wait)', load: () => import('./commands/relay/webhooks/disable.js') },
  { path: ['relay', 'webhooks', 'enable'], summary: 'Send to a disabled endpoint again', load: () => import('./commands/relay/webhooks/enable.js') },
  { path: ['relay', 'webhooks', 'recover'], summary: 'Send the failed deliveries of an endpoint since a time again (shows the count, asks first)', load: () => import('./commands/relay/webhooks/recover.js') },
  { path: ['relay', 'webhooks', 'deliveries'], summary: 'Show the delivery attempts of an endpoint', load: () => import('./commands/relay/webhooks/deliveries.js') },
  { path: ['relay', 'usage'], summary: 'Show the monthly usage of a workspace', load: () => import('./commands/relay/usage.js') },
  { path: ['relay', 'reputation'], summary: 'Show the bounce and complaint rates of a workspace over 1, 7 and 30 days', load: () => import('./commands/relay/reputation.js') },
  { path: ['relay', 'messages', 'list'], summary: 'List captured messages', load: () => import('./commands/relay/messages/list.js') },
  { path: ['relay', 'messages', 'wait'], summary: 'Wait for a captured message; print it, its first link or its code', load: () => import('./commands/relay/messages/wait.js') },
  { path: ['relay', 'messages', 'get'], summary: 'Show a captured message (headers, text, html)', load: () => import('./commands/relay/messages/get.js') },
  { path: ['relay', 'messages', 'check'], summary: 'Check a captured message: DKIM, SPF, DMARC, headers, HTML, links, spam', load: () => import('./commands/relay/messages/check.js') },
  { path: ['relay', 'messages', 'raw'], summary: 'Print a captured message as raw RFC 822', load: () => import('./commands/relay/messages/raw.js') },
  { path: ['relay', 'messages', 'clear'], summary: 'Delete every captured message', load: () => import('./commands/relay/messages/clear.js') },
  { path: ['relay', 'emails', 'attempts'], summary: 'Show every delivery attempt of an email with its SMTP conversation', load: () => import('./commands/relay/emails/attempts.js') },
  { path: ['relay', 'emails', 'retry'], summary: 'Try the delayed recipients of an email again now', load: () => import('./commands/relay/emails/retry.js') },
  { path: ['relay', 'projects', 'pause'], summary: "Pause a project's delivery (mail is admitted and waits)", load: () => import('./commands/relay/projects/pause.js') },
  { path: ['relay', 'projects', 'resume'], summary: "Resume a project's delivery", load: () => import('./commands/relay/projects/resume.js') },
  { path: ['relay', 'clock', 'get'], summary: 'Show the test clock', load: () => import('./commands/relay/clock/get.js') },
  { path: ['relay', 'clock', 'advance'], summary: 'Move the test clock forward', load: () => import('./commands/relay/clock/advance.js') },
];

/** Global flags taking a value (needed to find the command words in argv without commander). */
const GLOBAL_VALUE_FLAGS = new Set(['--api-key', '--base-url', '--profile']);

/** The leaf argv selects (the command words, skipping global flags and their values), if any. */
export function selectLeaf(args: string[]): Leaf | undefined {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (GLOBAL_VALUE_FLAGS.has(arg)) i++;
      continue;
    }
    if (words.length === 0 && arg === 'help') continue; // `ravenctl help send`
    words.push(arg);
    const leaf = LEAVES.find((l) => l.path.length === words.length && l.path.every((w, j) => w === words[j]));
    if (leaf) return leaf;
    if (!LEAVES.some((l) => words.every((w, j) => l.path[j] === w))) return undefined;
  }
  return undefined;
}

/** `--json` / `--no-json` as given in argv (the last wins), for reporting errors commander raised. */
export function jsonFlagOf(args: string[]): boolean | undefined {
  let json: boolean | undefined;
  for (const arg of args) {
    if (arg === '--') break;
    if (arg === '--json') json = true;
    else if (arg === '--no-json') json = false;
  }
  return json;
}

export interface ProgramIO {
  writeOut: (text: string) => void;
  writeErr: (text: string) => void;
}

export function createProgram(io: ProgramIO = { writeOut: (t) => process.stdout.write(t), writeErr: (t) => process.stderr.write(t) }): Command {
  const program = new Command('ravenctl');
  program
    .description('Raven: send transactional email, read its outcomes, verify webhooks, run a relay.')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    // Global flags: commander recognises program options anywhere in argv, before or after the
    // subcommand (positional options stay disabled on purpose).
    .enablePositionalOptions(false)
    .addOption(new Option('--api-key <key>', 'API key (default: $RAVEN_API_KEY, then the profile)'))
    .addOption(new Option('--base-url <url>', 'service address (default: $RAVEN_BASE_URL, the profile, http://127.0.0.1:7700)'))
    .addOption(new Option('--json', 'print one JSON document on stdout, and errors as JSON on stderr'))
    .addOption(new Option('--no-json', 'print for people (the default, piped or not)'))
    .addOption(new Option('--profile <name>', 'profile in the config file (default: $RAVEN_PROFILE, then "default")'))
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    // Usage errors and help/version become CommanderErrors that main turns into exit codes;
    // the error line itself is printed by main so --json can shape it.
    .exitOverride()
    .configureOutput({ writeOut: io.writeOut, writeErr: io.writeErr, outputError: () => {} })
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ ravenctl relay start',
        '  $ ravenctl send --from you@example.test --to them@example.test --subject Hi --text Hello',
        '  $ ravenctl emails list --json',
        '',
        'Exit codes: 0 success, 1 the API or a verification said no, 2 usage error, 3 network failure, 130 interrupted.',
        'Run "ravenctl <command> --help" for the error codes of each command.',
      ].join('\n'),
    );

  const nodes = new Map<string, Command>([['', program]]);
  const nodeFor = (path: string[]): Command => {
    const key = path.join(' ');
    const existing = nodes.get(key);
    if (existing) return existing;
    const parent = nodeFor(path.slice(0, -1));
    const group = parent.command(path[path.length - 1] as string).description(GROUPS[key] ?? '');
    group.addHelpText('after', `\nRun "ravenctl ${key} <command> --help" for examples and error codes.`);
    nodes.set(key, group);
    return group;
  };
  for (const leaf of LEAVES) {
    const parent = nodeFor(leaf.path.slice(0, -1));
    const cmd = parent.command(leaf.path[leaf.path.length - 1] as string).summary(leaf.summary).description(leaf.summary);
    nodes.set(leaf.path.join(' '), cmd);
  }
  return program;
}

export function commandAt(program: Command, path: string[]): Command | undefined {
  let node: Command | undefined = program;
  for (const word of path) node = node?.commands.find((c) => c.name() === word);
  return node;
}

const loaded = new WeakSet<Command>();

/** Load and register the full definition of one leaf (once). */
export async function loadLeaf(program: Command, leaf: Leaf): Promise<Command> {
  const cmd = commandAt(program, leaf.path);
  if (!cmd) throw new Error(`bug: no command node for ${leaf.path.join(' ')}`);
  if (loaded.has(cmd)) return cmd;
  loaded.add(cmd);
  const mod = await leaf.load();
  mod.register(cmd, { loadAllLeaves: () => loadAllLeaves(program) });
  return cmd;
}

/** Load every leaf (for completion scripts and tests of the whole tree). */
export async function loadAllLeaves(program: Command): Promise<void> {
  for (const leaf of LEAVES) await loadLeaf(program, leaf);
}
