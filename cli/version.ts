// The version ravenctl prints: the raven package's. Kept apart so `ravenctl --version` loads only this.
import { readFileSync } from 'node:fs';

export function version(): string {
  // cli/version.ts under tsx, dist/cli/main.js (the bundle) when built: package.json is one or two levels up.
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'raven' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}
