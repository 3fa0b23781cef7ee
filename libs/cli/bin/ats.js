#!/usr/bin/env node
'use strict';
// The `ats` command (package.json "bin"). It runs the CLI's compiled JavaScript under dist/, as
// `npm start` runs the service, compiling it first when the sources are newer than the last build
// (scripts/build-services.js: about a second, once), so `npx ats` works right after `npm ci` and
// every later command starts on plain Node, with no TypeScript compiler loaded.
const { join } = require('node:path');

const { buildIfStale, compiledEntry } = require(join(__dirname, '..', '..', '..', 'scripts', 'build-services.js'));

buildIfStale({ quiet: true }).then(
  () => require(compiledEntry('libs/cli/src/main.ts')),
  (error) => {
    console.error(`ats: could not compile the CLI (scripts/build-services.js): ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  },
);
