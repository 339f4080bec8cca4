// An MCP client built on the official TypeScript SDK that drives codemode's
// MCP server (over stdio) with upstream servers behind it, and prints a
// JSON report of what reached the client: the re-exported tools with their
// annotations, progress and log notifications, sampling and elicitation
// requests forwarded from the upstreams, and content blocks whole.
//
//   node client_forward.mjs COMMAND [ARG...]
//
// SERVER_ENV (JSON) is the server's environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, ProgressNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command, args, env: JSON.parse(process.env.SERVER_ENV ?? '{}'), stderr: 'inherit',
});
const client = new Client({ name: 'codemode-forward-test', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
const report = { sampling: [], elicitation: [], logs: [] };
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  const text = req.params.messages[0]?.content?.text ?? '';
  report.sampling.push(text);
  return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `echo: ${text}` } };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  report.elicitation.push(req.params.message);
  return { action: 'accept', content: { name: 'Grace' } };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { report.logs.push(n.params); });
// Progress is recorded by token here rather than with callTool's onprogress:
// the SDK drops a request's progress handler when its response is read,
// which can be before the progress notifications read with it are handled.
const progress = { direct: [], run: [] };
client.setNotificationHandler(ProgressNotificationSchema, (n) => { progress[n.params.progressToken]?.push(n.params); });
await client.connect(transport);
await client.setLoggingLevel('info');

const { tools } = await client.listTools();
report.tools = Object.fromEntries(tools.map((t) => [t.name, { title: t.title, annotations: t.annotations }]));

report.report = await client.callTool({ name: 'notes.report', arguments: { steps: 3 }, _meta: { progressToken: 'direct' } });
report.progress = progress.direct;

report.ask = await client.callTool({ name: 'notes.ask', arguments: { prompt: 'ping' } });

report.run = await client.callTool({
  name: 'run_code',
  _meta: { progressToken: 'run' },
  arguments: {
    description: 'nested calls that report and ask',
    code: 'const r = await tools["notes.report"]({steps: 2}); const a = await tools["notes.ask"]({prompt: "nested"}); return {r, a: a[0].text}',
  },
});
report.runProgress = progress.run;

report.links = await client.callTool({ name: 'everything.get-resource-links', arguments: { count: 2 } });
report.annotated = await client.callTool({ name: 'everything.get-annotated-message', arguments: { messageType: 'error', includeImage: true } });
report.reference = await client.callTool({ name: 'everything.get-resource-reference', arguments: { resourceType: 'Text', resourceId: 2 } });
report.sample = await client.callTool({ name: 'everything.trigger-sampling-request', arguments: { prompt: 'hello there', maxTokens: 10 } });

// Notifications read with the last response are handled in a microtask.
await new Promise((resolve) => setImmediate(resolve));
await client.close();
process.stdout.write(JSON.stringify(report));
