// A small stdio MCP server (the official SDK's low-level Server) whose tools probe what the
// process can reach: read or write a path, open a TCP connection, report its uid and env names.
// Used to test the jail stdio MCP servers run in; plain CommonJS so `node` runs it directly.
const { readFileSync, writeFileSync, readdirSync } = require('node:fs');
const { connect } = require('node:net');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const pathArg = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const tools = [
  { name: 'read', description: 'Read a file or list a directory', inputSchema: pathArg },
  { name: 'write', description: 'Write a file', inputSchema: pathArg },
  {
    name: 'connect',
    description: 'Open a TCP connection',
    inputSchema: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'number' } }, required: ['host', 'port'] },
  },
  { name: 'whoami', description: 'uid, cwd and environment variable names', inputSchema: { type: 'object', properties: {} } },
];

function attempt(fn) {
  try {
    return `ok: ${fn()}`;
  } catch (error) {
    return `error: ${error.code || error.message}`;
  }
}

const probes = {
  read: ({ path }) => attempt(() => (path.endsWith('/') ? readdirSync(path).join(',') : readFileSync(path, 'utf8'))),
  write: ({ path }) => attempt(() => (writeFileSync(path, 'probe'), 'written')),
  connect: ({ host, port }) =>
    new Promise((resolve) => {
      const socket = connect({ host, port, timeout: 2000 });
      socket.once('connect', () => (socket.destroy(), resolve('ok: connected')));
      socket.once('timeout', () => (socket.destroy(), resolve('error: timeout')));
      socket.once('error', (error) => resolve(`error: ${error.code || error.message}`));
    }),
  whoami: () => `ok: uid=${process.getuid()} cwd=${process.cwd()} env=${Object.keys(process.env).sort().join(',')}`,
};

const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const probe = probes[request.params.name];
  const text = probe ? await probe(request.params.arguments || {}) : `error: no tool ${request.params.name}`;
  return { content: [{ type: 'text', text }] };
});
server.connect(new StdioServerTransport());
