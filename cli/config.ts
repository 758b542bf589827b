/**
 * Where ravenctl finds its credentials and the address of the service.
 *
 * API key:  --api-key > RAVEN_API_KEY > the profile in $XDG_CONFIG_HOME/raven/config.json
 * Base URL: --base-url > RAVEN_BASE_URL > the profile > http://127.0.0.1:7700 (a local relay)
 * Profile:  --profile > RAVEN_PROFILE > "default"
 *
 * The file holds secrets, so it is written with mode 0600 in a 0700 directory.
 */
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './errors.js';

/** The relay's default address: `ravenctl relay start` listens here. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:7700';
export const DEFAULT_PROFILE = 'default';

export interface Profile {
  api_key?: string;
  base_url?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface GlobalFlags {
  apiKey?: string;
  baseUrl?: string;
  profile?: string;
  json?: boolean;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'raven', 'config.json');
}

export async function readConfig(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`config file ${path} is not valid JSON; fix or delete it`, 'config_invalid');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`config file ${path} must hold a JSON object`, 'config_invalid');
  }
  const profiles = (parsed as { profiles?: unknown }).profiles;
  if (profiles === undefined) return { profiles: {} };
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) {
    throw new UsageError(`config file ${path}: "profiles" must be an object`, 'config_invalid');
  }
  return { profiles: profiles as Record<string, Profile> };
}

/** Write atomically (temp file + rename) so a crash never leaves half a config, mode 0600. */
export async function writeConfig(path: string, config: ConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

export function profileName(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): string {
  return nonEmpty(flags.profile) ?? nonEmpty(env.RAVEN_PROFILE) ?? DEFAULT_PROFILE;
}

export interface ResolvedTarget {
  baseUrl: string;
  apiKey: string | undefined;
  apiKeySource: '--api-key' | 'RAVEN_API_KEY' | 'profile' | undefined;
  profile: string;
}

/** Resolve the key and base URL without requiring either. */
export async function resolveTarget(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedTarget> {
  const profile = profileName(flags, env);
  const needFile = (!nonEmpty(flags.apiKey) && !nonEmpty(env.RAVEN_API_KEY)) || (!nonEmpty(flags.baseUrl) && !nonEmpty(env.RAVEN_BASE_URL));
  const stored = needFile ? (await readConfig(configPath(env))).profiles[profile] : undefined;
  if (flags.profile !== undefined && needFile && stored === undefined) {
    throw new UsageError(`profile "${profile}" not found in ${configPath(env)}; run: ravenctl login --profile ${profile}`);
  }

  let apiKey: string | undefined;
  let apiKeySource: ResolvedTarget['apiKeySource'];
  if (nonEmpty(flags.apiKey)) [apiKey, apiKeySource] = [flags.apiKey, '--api-key'];
  else if (nonEmpty(env.RAVEN_API_KEY)) [apiKey, apiKeySource] = [env.RAVEN_API_KEY, 'RAVEN_API_KEY'];
  else if (nonEmpty(stored?.api_key)) [apiKey, apiKeySource] = [stored?.api_key, 'profile'];

  const baseUrl = normalizeBaseUrl(
    nonEmpty(flags.baseUrl) ?? nonEmpty(env.RAVEN_BASE_URL) ?? nonEmpty(stored?.base_url) ?? DEFAULT_BASE_URL,
  );
  return { baseUrl, apiKey, apiKeySource, profile };
}

/** Like resolveTarget, but a missing key is a usage error (exit 2). */
export async function requireApiKey(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedTarget & { apiKey: string }> {
  const target = await resolveTarget(flags, env);
  if (!target.apiKey) {
    throw new UsageError('no API key: pass --api-key, set RAVEN_API_KEY or run "ravenctl login"', 'missing_api_key');
  }
  return { ...target, apiKey: target.apiKey };
}

export function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`invalid base URL "${value}": expected http(s)://host[:port]`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`invalid base URL "${value}": expected http(s)://host[:port]`);
  }
  return value.replace(/\/+$/, '');
}

/** The local relay's data directory, as `ravenctl relay start` defaults it. */
export const DEFAULT_DATA_DIR = '.raven';

/**
 * Admin token for `ravenctl relay ...`: --admin-token > RAVEN_ADMIN_TOKEN > the `admin-token`
 * file the local relay keeps in its data directory (--data-dir > RAVEN_DATA_DIR > ./.raven).
 * The file is refused when other users may read it: the token opens every workspace.
 */
export async function resolveAdminToken(
  flag: string | undefined,
  dataDirFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const given = nonEmpty(flag) ?? nonEmpty(env.RAVEN_ADMIN_TOKEN);
  if (given) return given;
  const file = join(nonEmpty(dataDirFlag) ?? nonEmpty(env.RAVEN_DATA_DIR) ?? DEFAULT_DATA_DIR, 'admin-token');
  let mode: number;
  try {
    mode = (await stat(file)).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new UsageError(
      `no admin token: pass --admin-token, set RAVEN_ADMIN_TOKEN, or run where the relay keeps its data (${file} not found; --data-dir DIR)`,
      'missing_admin_token',
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new UsageError(
      `${file} is open to other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${file}`,
      'admin_token_file_unsafe',
    );
  }
  const token = (await readFile(file, 'utf8')).trim();
  if (token === '') throw new UsageError(`${file} is empty: pass --admin-token or set RAVEN_ADMIN_TOKEN`, 'missing_admin_token');
  return token;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}
