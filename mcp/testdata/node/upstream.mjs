// An upstream MCP server built on the official TypeScript SDK, for the
// tests of codemode's mcp_servers support.
//
//   node upstream.mjs            serve on stdio
//   node upstream.mjs --http     serve streamable HTTP on 127.0.0.1 (a free
//                                port); prints "listening <url>" on stdout
//
// MARKER_DIR, when set, is where the "slow" tool writes a file named
// "aborted-<tag>" when its call is cancelled, so the Go test can see that
// cancellation reached the upstream.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const markerDir = process.env.MARKER_DIR;

// A 1x1 transparent PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

function newServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });

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

async function serveHTTP() {
  const transports = new Map();
  const http = createServer(async (req, res) => {
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
  http.listen(0, '127.0.0.1', () => {
    const { port } = http.address();
    process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
}

if (process.argv.includes('--http')) {
  await serveHTTP();
} else {
  await newServer().connect(new StdioServerTransport());
}
