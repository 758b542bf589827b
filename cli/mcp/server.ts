/**
 * `ravenctl mcp`: a Model Context Protocol server over stdio (the official SDK's McpServer and
 * StdioServerTransport) offering the tools of tools.ts for one relay. stdout is the protocol's:
 * nothing else is ever written there. A tool that fails answers a tool error naming what to do
 * (start the relay, set the admin token or the API key); the server keeps running.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape } from 'zod';
import { APIError, ConnectionError, RavenError } from 'raven-email-sdk';
import { CliError } from '../errors.js';
import { TOOLS, type McpClients } from './tools.js';

/** Why a tool failed, as a sentence an agent (or its user) can act on. */
export function toolFailure(error: unknown, baseUrl: string): string {
  if (error instanceof ConnectionError) {
    return `No relay answers at ${baseUrl}: start one with \`ravenctl relay start\` (or \`npm run relay\`), or point RAVEN_BASE_URL (--base-url) at it.`;
  }
  if (error instanceof APIError) {
    if (error.code === 'unauthorized') {
      return `The relay at ${baseUrl} refused the admin token: set RAVEN_ADMIN_TOKEN (or --admin-token) to the token the relay printed at start (also in its data directory, <data-dir>/admin-token).`;
    }
    if (error.code === 'invalid_api_key') {
      return 'The relay refused the API key: set RAVEN_API_KEY (or --api-key) to a key with the email:send permission (ravenctl relay keys create).';
    }
    const details = error.body && typeof error.body === 'object' ? (error.body as { error?: { details?: Array<{ field: string; message: string }> } }).error?.details : undefined;
    const fields = details && details.length > 0 ? ` (${details.map((d) => `${d.field}: ${d.message}`).join('; ')})` : '';
    return `${error.code ?? `HTTP ${error.status}`}: ${error.message}${fields}`;
  }
  if (error instanceof CliError) return `${error.message} (${error.code})`;
  if (error instanceof RavenError) return error.message;
  return `unexpected error: ${(error as Error).message}`;
}

export async function runMcpServer(clients: McpClients, version: string): Promise<void> {
  const server = new McpServer({ name: 'raven', version });
  // One loop over tools of different shapes: each tool's own types are checked in tools.ts.
  const register = server.registerTool.bind(server) as unknown as (
    name: string,
    config: { description: string; inputSchema: ZodRawShape },
    callback: (args: unknown) => Promise<CallToolResult>,
  ) => void;
  for (const definition of TOOLS) {
    register(definition.name, { description: definition.description, inputSchema: definition.inputSchema }, async (args) => {
      try {
        const result = await (definition.run as (a: unknown, c: McpClients) => Promise<unknown>)(args, clients);
        return { content: [{ type: 'text' as const, text: JSON.stringify(result) }] };
      } catch (error) {
        const baseUrl = await clients.baseUrl().catch(() => 'the base URL');
        return { isError: true, content: [{ type: 'text' as const, text: toolFailure(error, baseUrl) }] };
      }
    });
  }
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
