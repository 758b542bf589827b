/**
 * ravenctl login [--profile name]: store an API key in the config file (mode 0600).
 * The key is read from a hidden prompt, or from stdin when piped; never from argv, where it
 * would land in shell history and `ps`.
 */
import type { Command } from 'commander';
import { configPath, profileName, readConfig, resolveTarget, writeConfig } from '../config.js';
import { action } from '../context.js';
import { UsageError } from '../errors.js';
import { addHelp } from '../help.js';
import { readStdin } from '../io.js';
import { redactKey, renderFields } from '../output.js';

const KEY_FORMAT = /^rr_(test|live)_[\x21-\x7e]+$/;

export function register(cmd: Command): void {
  cmd.action(
    action<Record<string, never>>(async (ctx) => {
      if (ctx.globals.apiKey !== undefined) {
        throw new UsageError('login does not take --api-key (argv leaks into shell history): type it at the prompt or pipe it on stdin');
      }
      const validate = (v: string) => (KEY_FORMAT.test(v.trim()) ? true : 'expected a key starting rr_test_ or rr_live_');
      let key: string;
      if (!process.stdin.isTTY) {
        key = (await readStdin()).toString('utf8').split(/\r?\n/)[0]?.trim() ?? '';
      } else if (ctx.ask.interactive) {
        key = (await ctx.ask.password('stdin', 'API key (input hidden)', validate)).trim();
      } else {
        throw new UsageError('no API key: run "ravenctl login" in a terminal, or pipe the key on stdin', 'missing_option');
      }
      if (validate(key) !== true) {
        throw new UsageError(key === '' ? 'no API key given on stdin' : 'that does not look like an API key (rr_test_... or rr_live_...)');
      }

      const profile = profileName(ctx.globals, ctx.env);
      const path = configPath(ctx.env);
      // Keep the base URL this profile should talk to: the flag/env when given, else what it had.
      const config = await readConfig(path);
      const baseUrl = (await resolveTarget({ ...ctx.globals, profile: undefined }, { ...ctx.env, RAVEN_PROFILE: profile })).baseUrl;
      config.profiles[profile] = { ...config.profiles[profile], api_key: key, base_url: baseUrl };
      await writeConfig(path, config);

      const result = { profile, api_key: redactKey(key), base_url: baseUrl, path };
      ctx.out.result(result, () =>
        [
          `Saved profile ${profile}`,
          renderFields([['  Key', result.api_key], ['  Base URL', baseUrl], ['  File', path]], ctx.out.paint),
        ].join('\n'),
      );
    }),
  );
  addHelp(cmd, {
    examples: [
      'ravenctl login',
      'ravenctl login --profile staging --base-url https://relay.staging.example.com',
      'printf %s "$RAVEN_KEY" | ravenctl login --profile ci',
    ],
    usage: ['config_invalid'],
    network: false,
  });
}
