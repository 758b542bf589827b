/**
 * What every command action gets: the global flags, the output, the asker, and lazily built SDK
 * clients (the SDK and undici load only when a command talks to the network).
 */
import type { Command } from 'commander';
import { requireApiKey, resolveAdminToken, resolveTarget, type GlobalFlags, type ResolvedTarget } from './config.js';
import { UsageError } from './errors.js';
import { Output } from './output.js';
import { createAsker, isInteractive, type Asker } from './prompts.js';

type Sdk = typeof import('raven-email-sdk');
type RavenClient = InstanceType<Sdk['Raven']>;
type AdminClient = InstanceType<Sdk['RavenAdmin']>;

export interface RunContext {
  globals: GlobalFlags;
  out: Output;
  ask: Asker;
  env: NodeJS.ProcessEnv;
  /** The public API client; a missing key is a usage error. */
  raven(): Promise<{ client: RavenClient; target: ResolvedTarget }>;
  /** The relay admin client; the token comes from --admin-token or RAVEN_ADMIN_TOKEN. */
  admin(adminTokenFlag: string | undefined): Promise<AdminClient>;
  target(): Promise<ResolvedTarget>;
  sdk(): Promise<Sdk>;
  /** Releases the clients' connections so the process can exit promptly. */
  dispose(): Promise<void>;
}

const open: Array<{ close?: () => unknown }> = [];

export function loadSdk(): Promise<Sdk> {
  return import('raven-email-sdk');
}

export function globalsOf(cmd: Command): GlobalFlags {
  const all = cmd.optsWithGlobals<Record<string, unknown>>();
  return {
    apiKey: typeof all.apiKey === 'string' ? all.apiKey : undefined,
    baseUrl: typeof all.baseUrl === 'string' ? all.baseUrl : undefined,
    profile: typeof all.profile === 'string' ? all.profile : undefined,
    json: typeof all.json === 'boolean' ? all.json : undefined,
  };
}

export function createContext(cmd: Command, env: NodeJS.ProcessEnv = process.env): RunContext {
  const globals = globalsOf(cmd);
  const out = new Output({ json: globals.json, env });
  const ask = createAsker(isInteractive({ json: out.json, env }));
  return {
    globals,
    out,
    ask,
    env,
    sdk: loadSdk,
    target: () => resolveTarget(globals, env),
    async raven() {
      const target = await requireApiKey(globals, env);
      const { Raven } = await loadSdk();
      const client = new Raven({ apiKey: target.apiKey, baseUrl: target.baseUrl, logLevel: 'off' });
      open.push(client as { close?: () => unknown });
      return { client, target };
    },
    async admin(adminTokenFlag) {
      const adminToken = resolveAdminToken(adminTokenFlag, env);
      if (!adminToken) {
        throw new UsageError(
          'no admin token: pass --admin-token or set RAVEN_ADMIN_TOKEN (printed by "ravenctl relay start")',
          'missing_admin_token',
        );
      }
      const { baseUrl } = await resolveTarget(globals, env);
      const { RavenAdmin } = await loadSdk();
      const client = new RavenAdmin({ adminToken, baseUrl, logLevel: 'off' });
      open.push(client as { close?: () => unknown });
      return client;
    },
    async dispose() {
      await Promise.allSettled(open.splice(0).map(async (c) => c.close?.()));
    },
  };
}

/**
 * Wraps a command body for commander: builds the context from the command's (and its parents')
 * options, passes the positional arguments, and always releases the clients.
 */
export function action<O>(
  fn: (ctx: RunContext, opts: O, ...args: string[]) => Promise<void>,
): (...params: unknown[]) => Promise<void> {
  return async (...params: unknown[]) => {
    const cmd = params[params.length - 1] as Command;
    const args = params.slice(0, -2) as string[];
    const ctx = createContext(cmd);
    try {
      await fn(ctx, cmd.opts() as O, ...args);
    } finally {
      await ctx.dispose();
    }
  };
}
