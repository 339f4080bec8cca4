// An MCP client built on the official TypeScript SDK that drives codemode's
// MCP server through one scenario and prints a JSON report on stdout.
//
//   node client.mjs stdio COMMAND [ARG...]   start the server and talk over stdio
//   node client.mjs http URL                 talk streamable HTTP to URL
//
// MARKER_DIR names the directory where the server's test_block tool writes
// "started" when its call begins and "cancelled" when it is cancelled; the
// scenario waits for those files, so no step depends on timing. For stdio,
// SERVER_ENV (JSON) is the server's environment.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...rest] = process.argv.slice(2);
const markerDir = process.env.MARKER_DIR;
if (!markerDir) throw new Error('MARKER_DIR is required');

async function waitForFile(name) {
  const path = join(markerDir, name);
  // A hang guard only: the Go test bounds the whole run.
  while (!existsSync(path)) await sleep(10);
}

let transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({
    command: target,
    args: rest,
    env: JSON.parse(process.env.SERVER_ENV ?? '{}'),
    stderr: 'inherit',
  });
} else if (mode === 'http') {
  transport = new StreamableHTTPClientTransport(new URL(target));
} else {
  throw new Error(`unknown mode ${mode}`);
}

const client = new Client({ name: 'codemode-test-client', version: '1.0.0' });
const report = { listChanged: 0 };
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { report.listChanged++; });
await client.connect(transport);

// The tool list must parse under the SDK's strict schema (objects with
// type "object" at the root of every input and output schema).
const { tools } = await client.listTools();
report.tools = tools.map((t) => t.name).sort();
report.runCodeDescription = tools.find((t) => t.name === 'run_code')?.description ?? null;

// callTool validates structuredContent against the listed outputSchema.
report.program = await client.callTool({
  name: 'run_code',
  arguments: {
    code: 'console.log("adding"); const r = await tools.math_add({ a: 2, b: 3 }); return { sum: r.sum }',
    description: 'adds two numbers',
  },
});
report.failing = await client.callTool({
  name: 'run_code',
  arguments: { code: 'console.log("before"); throw new Error("kaput")', description: 'fails on purpose' },
});
report.direct = await client.callTool({ name: 'math_add', arguments: { a: 20, b: 22 } });
report.toolError = await client.callTool({ name: 'util_fail', arguments: { message: 'no luck' } });

// Cancellation: abort once the program's tool call has started.
const abort = new AbortController();
const pending = client.callTool(
  { name: 'run_code', arguments: { code: 'await tools.test_block({}); return "unreachable"', description: 'blocks until cancelled' } },
  undefined,
  { signal: abort.signal },
);
await waitForFile('started');
abort.abort('the test cancels');
try {
  await pending;
  report.cancel = 'completed';
} catch (e) {
  report.cancel = `rejected: ${e?.message ?? e}`;
}
await waitForFile('cancelled');
report.cancelReachedTool = true;

// The session goes on after a cancellation.
report.after = await client.callTool({ name: 'math_add', arguments: { a: 1, b: 1 } });

await client.close();
process.stdout.write(JSON.stringify(report) + '\n');
