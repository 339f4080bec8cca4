// An upstream MCP server built on the official TypeScript SDK, for the
// tests of codemode's mcp_servers support.
//
//   node upstream.mjs            serve on stdio
//   node upstream.mjs --http     serve streamable HTTP on 127.0.0.1 (a free
//                                port); prints "listening <url>" on stdout
//   node upstream.mjs --sse      serve the legacy HTTP+SSE transport instead
//                                (GET /mcp opens the stream; POST /mcp is 405)
//
// HTTP options: --port N listens on N; --bearer TOKEN answers 401 to any
// request without "Authorization: Bearer TOKEN"; --header NAME:VALUE answers
// 400 to any request without that header.
//
// MARKER_DIR, when set, is where the "slow" tool writes a file named
// "aborted-<tag>" when its call is cancelled, and the "slow_task" tool (which
// requires task-augmented calls) "task-cancelled-<tag>" when its task is, so
// the Go test can see that cancellation reached the upstream.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const markerDir = process.env.MARKER_DIR;

// A 1x1 transparent PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

function newServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' }, {
    capabilities: { logging: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
    taskStore: new InMemoryTaskStore(),
  });

  // A tool that runs only as a task: it works ms milliseconds, or until its
  // task is cancelled.
  server.experimental.tasks.registerToolTask('slow_task', {
    description: 'Works ms milliseconds as a task.',
    inputSchema: { ms: z.number(), tag: z.string().optional() },
    execution: { taskSupport: 'required' },
  }, {
    async createTask({ ms, tag }, { taskStore, taskRequestedTtl }) {
      const task = await taskStore.createTask({ ttl: taskRequestedTtl ?? 60000, pollInterval: 50 });
      (async () => {
        const end = Date.now() + ms;
        while (Date.now() < end) {
          await new Promise((r) => setTimeout(r, 20));
          const t = await taskStore.getTask(task.taskId);
          if (t?.status === 'cancelled') {
            if (markerDir && tag) writeFileSync(join(markerDir, `task-cancelled-${tag}`), 'cancelled');
            return;
          }
        }
        await taskStore.storeTaskResult(task.taskId, 'completed', {
          content: [{ type: 'text', text: `worked ${ms} ms` }],
        });
      })();
      return { task };
    },
    async getTask(_args, { taskId, taskStore }) {
      return await taskStore.getTask(taskId);
    },
    async getTaskResult(_args, { taskId, taskStore }) {
      return await taskStore.getTaskResult(taskId);
    },
  });

  server.registerTool('add', {
    description: 'Adds two numbers.',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
    annotations: { readOnlyHint: true },
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
    structuredContent: { sum: a + b },
  }));

  server.registerTool('echo_text', {
    description: 'Echoes text as plain content (no output schema).',
    inputSchema: { text: z.string() },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));

  server.registerTool('picture', {
    description: 'Returns a caption and an image.',
    inputSchema: {},
  }, async () => ({
    content: [{ type: 'text', text: 'a pixel' }, { type: 'image', data: PNG, mimeType: 'image/png' }],
  }));

  server.registerTool('fail', {
    description: 'Always fails with the message.',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ isError: true, content: [{ type: 'text', text: message }] }));

  server.registerTool('slow', {
    description: 'Waits ms milliseconds, or until cancelled.',
    inputSchema: { ms: z.number(), tag: z.string().optional() },
    outputSchema: { slept: z.number() },
  }, async ({ ms, tag }, extra) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        if (markerDir && tag) writeFileSync(join(markerDir, `aborted-${tag}`), 'aborted');
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `slept ${ms}` }], structuredContent: { slept: ms } };
  });

  server.registerTool('pid', {
    description: 'The server process id.',
    inputSchema: {},
    outputSchema: { pid: z.number() },
  }, async () => ({ content: [{ type: 'text', text: String(process.pid) }], structuredContent: { pid: process.pid } }));

  server.registerTool('chatty', {
    description: 'Writes a debug line that is not JSON-RPC to stdout, then answers.',
    inputSchema: { text: z.string() },
  }, async ({ text }) => {
    process.stdout.write(`debug: about to echo ${text}\n`);
    return { content: [{ type: 'text', text }] };
  });

  server.registerTool('report', {
    description: 'Sends steps progress notifications and one log message, then answers.',
    inputSchema: { steps: z.number() },
    outputSchema: { steps: z.number() },
  }, async ({ steps }, extra) => {
    await server.sendLoggingMessage({ level: 'warning', logger: 'report', data: { starting: steps } }, extra.sessionId);
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
      }
    }
    return { content: [{ type: 'text', text: `did ${steps}` }], structuredContent: { steps } };
  });

  server.registerTool('ask', {
    description: 'Asks the client to sample a reply, then to elicit a name; returns both.',
    inputSchema: { prompt: z.string() },
  }, async ({ prompt }, extra) => {
    const out = {};
    try {
      const r = await extra.sendRequest({ method: 'sampling/createMessage', params: {
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 20 } }, CreateMessageResultSchema);
      out.sampled = r.content.type === 'text' ? r.content.text : r.content.type;
    } catch (e) {
      out.samplingError = `${e.code}: ${e.message}`;
    }
    try {
      const r = await extra.sendRequest({ method: 'elicitation/create', params: {
        message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } }, ElicitResultSchema);
      out.elicited = r.action === 'accept' ? r.content.name : r.action;
    } catch (e) {
      out.elicitationError = `${e.code}: ${e.message}`;
    }
    return { content: [{ type: 'text', text: JSON.stringify(out) }] };
  });

  server.registerTool('add_tool', {
    description: 'Registers a new tool that returns {name}; the server announces the change.',
    inputSchema: { name: z.string() },
  }, async ({ name }) => {
    server.registerTool(name, {
      description: `A tool added at run time (${name}).`,
      inputSchema: {},
      outputSchema: { name: z.string() },
    }, async () => ({ content: [{ type: 'text', text: name }], structuredContent: { name } }));
    return { content: [{ type: 'text', text: `added ${name}` }] };
  });

  return server;
}

function option(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

// refused answers a request that lacks the required credentials or header.
function refused(req, res) {
  const bearer = option('--bearer');
  if (bearer && req.headers.authorization !== `Bearer ${bearer}`) {
    res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end('unauthorized');
    return true;
  }
  const header = option('--header');
  if (header) {
    const [name, value] = header.split(':');
    if (req.headers[name.toLowerCase()] !== value) {
      res.writeHead(400).end(`missing header ${name}`);
      return true;
    }
  }
  return false;
}

function listen(http) {
  http.listen(Number(option('--port') ?? 0), '127.0.0.1', () => {
    const { port } = http.address();
    process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
}

async function serveSSE() {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    if (refused(req, res)) return;
    const url = new URL(req.url, 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/mcp') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await newServer().connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId'));
      if (!transport) {
        res.writeHead(404).end('unknown session');
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end('method not allowed');
  });
  listen(http);
}

async function serveHTTP() {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    if (refused(req, res)) return;
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      if (id) {
        res.writeHead(404).end('unknown session');
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  listen(http);
}

if (process.argv.includes('--http')) {
  await serveHTTP();
} else if (process.argv.includes('--sse')) {
  await serveSSE();
} else {
  await newServer().connect(new StdioServerTransport());
}
