#!/usr/bin/env node
'use strict';
// The `ats` command (this package's "bin", and the root package.json's in a clone). It runs the CLI's
// TypeScript sources as they are, with no build step: Sucrase, a small pure-JavaScript compiler that
// only removes the types and turns the imports into require() calls (no type checking, which is
// `npm run typecheck`'s job), compiles each .ts file of the CLI and of the typed client as Node loads
// it, in about a millisecond per file. So the command works right after `npm ci` or `npm install`,
// needs no compiler toolchain (SWC, tsc) and never reaches the service's code or its build.
const Module = require('node:module');
const { dirname, join, sep } = require('node:path');
const { addHook } = require('sucrase/dist/register');

const CLIENT = '@agentic-task-service/client';
const CLI_ROOT = join(__dirname, '..');

/** Where the typed client's package is. */
function clientRoot() {
  try {
    // Installed (npm install of this package): the dependency, wherever npm put it.
    return dirname(require.resolve(`${CLIENT}/package.json`));
  } catch {
    // A clone of the repository: the root `npm ci` does not install libs/client as a package (the
    // repository's code reaches it through tsconfig.json's path alias); it is the folder beside this one.
    return join(CLI_ROOT, '..', 'client');
  }
}

const CLIENT_ROOT = clientRoot();
// The client's package.json "main" is its tsc build (dist/), which exists only once the client has
// been built for publishing; its "source" field names the TypeScript entry, which it ships too. The
// one import of the client by name is sent there, so the client runs from source like the CLI.
const CLIENT_SOURCE = join(CLIENT_ROOT, require(join(CLIENT_ROOT, 'package.json')).source);
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, request === CLIENT ? CLIENT_SOURCE : request, ...rest);
};

// Only the two packages' own sources are compiled (they sit under node_modules once installed,
// which the hook would skip by default); every other package is plain JavaScript already.
const OWN_SOURCES = [join(CLI_ROOT, 'src') + sep, join(CLIENT_ROOT, 'src') + sep];
addHook(
  '.ts',
  {
    transforms: ['typescript', 'imports'],
    // Node 20 runs ES2022 as it is: class fields keep their own semantics (as tsc's ES2022 target emits them).
    disableESTransforms: true,
    // @clack/prompts is an ES module: its import() stays a real dynamic import, not a require().
    preserveDynamicImport: true,
  },
  { matcher: (file) => OWN_SOURCES.some((dir) => file.startsWith(dir)), ignoreNodeModules: false },
);

require('../src/main');
