/**
 * The signing secret of `ravenctl listen`, kept per relay and API key on this machine (as the
 * Stripe CLI keeps its own), so a receiver configured with it keeps verifying across restarts of
 * listen. Stored beside the config file ($XDG_CONFIG_HOME/raven/listen-secrets.json, mode 0600),
 * under a digest of the key: the key itself is never written there.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { configPath } from './config.js';

function secretsPath(env: NodeJS.ProcessEnv): string {
  return join(dirname(configPath(env)), 'listen-secrets.json');
}

async function readSecrets(file: string): Promise<Record<string, string>> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** The stored secret for this relay and key, created (and stored) the first time. */
export async function listenSecret(baseUrl: string, apiKey: string, env: NodeJS.ProcessEnv): Promise<string> {
  const file = secretsPath(env);
  const id = `${baseUrl} ${createHash('sha256').update(apiKey).digest('hex').slice(0, 32)}`;
  const secrets = await readSecrets(file);
  const known = secrets[id];
  if (typeof known === 'string' && known.startsWith('whsec_')) return known;
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ ...secrets, [id]: secret }, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
  return secret;
}
