/**
 * Shared pieces of the `ravenctl relay <resource> <verb>` admin commands (the dashboard's
 * operations, through RavenAdmin): the --admin-token flag, help, and human renderings.
 */
import type { Command } from 'commander';
import { action, type RunContext } from './context.js';
import { ADMIN_CODES, addHelp } from './help.js';
import { renderFields, renderTable, statusStyle, type Column, type Paint } from './output.js';

export type AdminClient = Awaited<ReturnType<RunContext['admin']>>;

export interface AdminSpec {
  examples: string[];
  /** Refusal codes beyond the ones every admin call can meet. */
  refused?: readonly string[];
}

/**
 * Registers the admin token flags, the help text and the action. The body calls `admin()` for the
 * client (one per run); the token comes from --admin-token, else RAVEN_ADMIN_TOKEN, else the
 * local relay's data directory (--data-dir, default ./.raven).
 */
export function adminAction<O extends { adminToken?: string; dataDir?: string }>(
  cmd: Command,
  spec: AdminSpec,
  fn: (ctx: RunContext, admin: () => Promise<AdminClient>, opts: O, ...args: string[]) => Promise<void>,
): void {
  cmd.option('--admin-token <token>', 'relay admin token (default: $RAVEN_ADMIN_TOKEN, else the one in --data-dir)');
  cmd.option('--data-dir <dir>', "the local relay's data directory, read for the admin token (default: $RAVEN_DATA_DIR, else ./.raven)");
  cmd.action(
    action<O>((ctx, opts, ...args) => {
      let client: Promise<AdminClient> | undefined;
      return fn(ctx, () => (client ??= ctx.admin(opts)), opts, ...args);
    }),
  );
  addHelp(cmd, {
    examples: spec.examples,
    refused: [...ADMIN_CODES, ...(spec.refused ?? [])],
    usage: ['missing_admin_token', 'admin_token_file_unsafe'],
  });
}

export function timestampOrDash(value: string | null | undefined): string {
  return value ?? '-';
}

export function renderList<T>(items: T[], columns: Column<T>[], empty: string, paint: Paint): string {
  return items.length === 0 ? paint('dim', empty) : renderTable(columns, items, paint);
}

/** Plain `label value` block of a resource's scalar fields. */
export function renderResource(resource: Record<string, unknown>, paint: Paint): string {
  return renderFields(
    Object.entries(resource)
      .filter(([, v]) => v === null || typeof v !== 'object')
      .map(([k, v]) => [k, v === null ? '-' : k === 'status' ? paint(statusStyle(String(v)), String(v)) : String(v)]),
    paint,
  );
}
