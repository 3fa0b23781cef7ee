#!/usr/bin/env node
'use strict';
// The `ats` command (this package's "bin", and the root package.json's in a clone). It runs the CLI's
// TypeScript sources as they are, with no build step: Sucrase, a small pure-JavaScript compiler that
// only removes the types and turns the imports into require() calls (no type checking, which is
// `npm run typecheck`'s job), compiles each .ts file of the CLI and of the typed client as Node loads
// it. So the command works right after `npm ci` or `npm install`, needs no compiler toolchain (SWC,
// tsc) and never reaches the service's code or its build.
const { createHash } = require('node:crypto');
const { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { homedir } = require('node:os');
const { dirname, isAbsolute, join, sep } = require('node:path');

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

const SUCRASE_OPTIONS = {
  transforms: ['typescript', 'imports'],
  // Node 20 runs ES2022 as it is: class fields keep their own semantics (as tsc's ES2022 target emits them).
  disableESTransforms: true,
  // @clack/prompts is an ES module: its import() stays a real dynamic import, not a require().
  preserveDynamicImport: true,
};
// Loading Sucrase and compiling the thirty-odd files costs about 0.4 s, on every command. Each file's
// JavaScript is therefore kept, per user (never in a shared temporary folder, where another user could
// plant code to run), one file per source path, ending with a hash of what it was compiled from (the
// source, Sucrase's version, the options): an edited source or another Sucrase compiles again, and a
// command whose files are all kept does not load Sucrase. The cache is best effort: unwritable, it is
// skipped. Sucrase keeps every statement on its line, so stack traces point at the TypeScript lines.
const CACHE_DIR = join(
  process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache'),
  'ats',
  'compiled',
);
const COMPILER = `sucrase ${require('sucrase/package.json').version} ${JSON.stringify(SUCRASE_OPTIONS)}`;
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/**
 * Whether only this user could have written `path`: owned by this uid, not writable by group or
 * others, not a link. The stamp says what a file was compiled from, not who wrote it; a command
 * run as root with a user's HOME (sudo -E) must not run code that user left in its cache.
 */
function ownedByMe(path) {
  const stats = lstatSync(path);
  return !stats.isSymbolicLink() && (stats.mode & 0o022) === 0 && (process.getuid === undefined || stats.uid === process.getuid());
}

/** The JavaScript of one TypeScript source: kept from an earlier command, or compiled now. */
function compiled(filename) {
  const source = readFileSync(filename, 'utf8');
  const stamp = `\n//# ats-compiled ${sha256(`${COMPILER}\n${source}`)}\n`;
  const kept = join(CACHE_DIR, `${sha256(filename)}.js`);
  try {
    const code = ownedByMe(CACHE_DIR) && ownedByMe(kept) ? readFileSync(kept, 'utf8') : '';
    if (code.endsWith(stamp)) return code;
  } catch {
    // not kept yet
  }
  const code = require('sucrase').transform(source, { ...SUCRASE_OPTIONS, filePath: filename }).code + stamp;
  try {
    mkdirSync(CACHE_DIR, { recursive: true, mode: 0o700 });
    // Written whole under a temporary name, then renamed: two commands at once never read half a file.
    const temporary = `${kept}.${process.pid}.tmp`;
    writeFileSync(temporary, code, { mode: 0o600 });
    renameSync(temporary, kept);
  } catch {
    // a read-only or full home: compiled again next time
  }
  return code;
}

// Only the two packages' own sources are compiled; every other package is plain JavaScript already.
// require.extensions is the hook CommonJS offers (deprecated in the docs but kept, and what ts-node and
// Sucrase's own register use): on Node 20, module.register()'s loader hooks do not apply to require().
const OWN_SOURCES = [join(CLI_ROOT, 'src') + sep, join(CLIENT_ROOT, 'src') + sep];
Module._extensions['.ts'] = function (module, filename) {
  if (!OWN_SOURCES.some((dir) => filename.startsWith(dir)))
    throw new Error(`ats: ${filename} is not a source of the CLI or the typed client`);
  module._compile(compiled(filename), filename);
};

require('../src/main');
