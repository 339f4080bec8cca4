// An MCP client built on the official TypeScript SDK that calls run_code as
// a task (MCP 2025-11-25 tasks) over streamable HTTP and prints a JSON
// report on stdout: the task it got, the statuses it polled, its session's
// task list, and the result. The program waits for an approval that the Go
// test gives once the client has polled the task saying so (the client
// writes MARKER_DIR/waiting); a second task is cancelled.
//
//   node tasks.mjs URL
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url] = process.argv.slice(2);
const client = new Client({ name: 'codemode-tasks-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const report = { capabilities: client.getServerCapabilities()?.tasks ?? null, statuses: [] };
const { tools } = await client.listTools();
report.taskSupport = tools.find((t) => t.name === 'run_code')?.execution?.taskSupport ?? null;

const stream = client.experimental.tasks.callToolStream(
  {
    name: 'run_code',
    arguments: { code: 'const before = await tools.kv_get({ key: "k" }); await tools.kv_set({ key: "k", value: "v" }); return { before: before.found, after: (await tools.kv_get({ key: "k" })).value }' },
  },
  undefined,
  { task: { ttl: 60000 } },
);
for await (const message of stream) {
  switch (message.type) {
    case 'taskCreated':
      report.created = message.task;
      report.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
      break;
    case 'taskStatus':
      report.statuses.push({ status: message.task.status, message: message.task.statusMessage ?? '' });
      if ((message.task.statusMessage ?? '').includes('waiting for approval')) writeFileSync(join(process.env.MARKER_DIR, 'waiting'), '');
      break;
    case 'result':
      report.result = message.result;
      break;
    case 'error':
      report.error = String(message.error);
      break;
  }
}

// A task cancelled while it runs.
const created = await client.request(
  { method: 'tools/call', params: { name: 'run_code', arguments: { code: 'await new Promise(r => setTimeout(r, 20000)); return 1' }, task: { ttl: 60000 } } },
  (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
);
const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
report.cancelled = cancelled.status;
try {
  await client.experimental.tasks.getTaskResult(created.task.taskId, undefined);
  report.cancelledResult = 'a result';
} catch (err) {
  report.cancelledResult = 'rejected: ' + err.message;
}
// A tool other than run_code does not run as a task.
try {
  await client.request(
    { method: 'tools/call', params: { name: 'math_add', arguments: { a: 1, b: 2 }, task: {} } },
    (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
  );
  report.otherTool = 'a task';
} catch (err) {
  report.otherTool = 'rejected: ' + err.message;
}
await client.close();
process.stdout.write(JSON.stringify(report));
