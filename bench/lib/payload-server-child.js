// The egress benchmark's "internet": a plain HTTP server run as its own small process (plain
// JavaScript, no ts-node), so that the CPU it spends serving is not counted as the CPU of the
// bench process, which hosts the egress proxy being measured. `GET /bytes/<n>` answers n bytes
// (generated: one random MiB repeated, incompressible to anything that would try), with a
// Content-Length; any other path answers a few bytes, for the per-connection latency runs.
//   child → { port } once listening on argv[2] (a loopback address outside 127.0.0.1)
'use strict';
const { createServer } = require('node:http');
const { randomBytes } = require('node:crypto');

const CHUNK = randomBytes(1024 * 1024);

const server = createServer((req, res) => {
  const match = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
  if (!match) {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 3 }).end('ok\n');
    return;
  }
  const total = Number(match[1]);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total });
  let sent = 0;
  // Written as fast as the reader takes it: the next chunk only once the socket has drained.
  const writeMore = () => {
    while (sent < total) {
      const piece = total - sent >= CHUNK.length ? CHUNK : CHUNK.subarray(0, total - sent);
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', writeMore);
    }
    res.end();
  };
  writeMore();
});

process.on('disconnect', () => process.exit(0));
server.listen(0, process.argv[2], () => process.send({ port: server.address().port }));
