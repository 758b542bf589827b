// ravenctl mcp (CONTRACT section 10) driven by the official MCP SDK's client over stdio, as an
// agent's host runs it: list the tools, send, wait, read the links; a wrong admin token or no
// relay is a tool error that says what to do, and the server keeps answering.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ravenctlCommand, ravenctlEnv } from '../helpers/ravenctl.js';
import { startTestRelay, type TestRelay } from '../helpers/start-relay.js';

// Never the checkout: ravenctl runs in a folder of its own (its HOME too), removed at the end.
const home = mkdtempSync(join(tmpdir(), 'ravenctl-mcp-'));
after(() => rmSync(home, { recursive: true, force: true }));

async function connect(env: NodeJS.ProcessEnv): Promise<Client> {
  const [command, ...args] = ravenctlCommand(['mcp']);
  const transport = new StdioClientTransport({ command, args, cwd: home, env: ravenctlEnv(env, home) as Record<string, string>, stderr: 'pipe' });
  const client = new Client({ name: 'raven-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
const text = (result: unknown) => (result as ToolResult).content[0]!.text;
const json = (result: unknown) => {
  assert.ok(!(result as ToolResult).isError, text(result));
  return JSON.parse(text(result));
};

/** A stopped relay's port: its address is known and nothing listens there any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ravenctl mcp', () => {
  let t: TestRelay;
  let client: Client;
  before(async () => {
    t = await startTestRelay();
    client = await connect({ RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: t.adminToken, RAVEN_API_KEY: t.apiKey });
  });
  after(async () => {
    await client?.close();
    await t.stop();
  });

  test('lists the tools, each with a JSON Schema and a description', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of ['send_email', 'list_emails', 'get_email', 'search_inbox', 'read_message', 'wait_for_message', 'delete_messages']) {
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    }
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok((tool.description ?? '').length > 40, tool.name);
    }
    const wait = tools.find((tool) => tool.name === 'wait_for_message')!;
    assert.deepEqual(Object.keys(wait.inputSchema.properties ?? {}).slice(0, 5), ['to', 'subject', 'project', 'after', 'timeout']);
  });

  test('send, wait, read the link and the code; search; delete', async () => {
    const to = `agent@${t.domain}`;
    const sent = json(
      await client.callTool({
        name: 'send_email',
        arguments: {
          from: `App <app@${t.domain}>`,
          to,
          subject: 'Confirm your sign-up',
          html: '<p>Your code is <b>318204</b>.</p><p><a href="https://app.test/confirm?token=xyz">Confirm</a></p>',
        },
      }),
    );
    assert.match(sent.id, /^em_/);
    const message = json(await client.callTool({ name: 'wait_for_message', arguments: { to, timeout: 60 } }));
    assert.equal(message.subject, 'Confirm your sign-up');
    assert.deepEqual(message.links, [{ url: 'https://app.test/confirm?token=xyz', text: 'Confirm' }]);
    assert.deepEqual(message.codes, ['318204']);
    assert.equal(message.email_id, sent.id);
    assert.equal(message.project_id, t.projectId);
    assert.equal('html' in message, false, 'no bodies unless asked');

    const read = json(await client.callTool({ name: 'read_message', arguments: { id: message.id, include_html: true } }));
    assert.match(read.html, /318204/);
    const email = json(await client.callTool({ name: 'get_email', arguments: { id: sent.id } }));
    assert.equal(email.id, sent.id);
    const emails = json(await client.callTool({ name: 'list_emails', arguments: { limit: 5 } }));
    assert.ok(emails.emails.some((e: { id: string }) => e.id === sent.id));

    const found = json(await client.callTool({ name: 'search_inbox', arguments: { query: 'subject:sign-up' } }));
    assert.deepEqual(found.messages.map((m: { id: string }) => m.id), [message.id]);

    const timedOut = await client.callTool({ name: 'wait_for_message', arguments: { to: `nobody@${t.domain}`, timeout: 1 } });
    assert.equal((timedOut as ToolResult).isError, true);
    assert.match(text(timedOut), /wait_timeout/);

    assert.deepEqual(json(await client.callTool({ name: 'delete_messages', arguments: { id: message.id } })), { deleted: message.id });
    const gone = await client.callTool({ name: 'read_message', arguments: { id: message.id } });
    assert.equal((gone as ToolResult).isError, true);
    assert.match(text(gone), /not_found/);
  });

  test('a wrong admin token or no relay is a tool error naming what to do; the server keeps running', async () => {
    const wrong = await connect({ RAVEN_BASE_URL: t.url, RAVEN_ADMIN_TOKEN: 'not-the-token' });
    try {
      const result = await wrong.callTool({ name: 'search_inbox', arguments: {} });
      assert.equal((result as ToolResult).isError, true);
      assert.match(text(result), /refused the admin token: set RAVEN_ADMIN_TOKEN/);
      const noKey = await wrong.callTool({ name: 'send_email', arguments: { from: 'a@b.test', to: 'c@d.test', subject: 's', text: 't' } });
      assert.equal((noKey as ToolResult).isError, true);
      assert.match(text(noKey), /RAVEN_API_KEY/);
      assert.ok((await wrong.listTools()).tools.length >= 7, 'still answering');
    } finally {
      await wrong.close();
    }
    const nowhere = await connect({ RAVEN_BASE_URL: `http://127.0.0.1:${await closedPort()}`, RAVEN_ADMIN_TOKEN: t.adminToken });
    try {
      const result = await nowhere.callTool({ name: 'wait_for_message', arguments: { to: 'x@y.test', timeout: 1 } });
      assert.equal((result as ToolResult).isError, true);
      assert.match(text(result), /No relay answers at http:\/\/127\.0\.0\.1:\d+: start one with `ravenctl relay start`/);
      assert.ok((await nowhere.listTools()).tools.length >= 7, 'still answering');
    } finally {
      await nowhere.close();
    }
  });
});
