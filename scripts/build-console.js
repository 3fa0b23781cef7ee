// Builds the web console (services/api/console) with Vite when its build is missing or older than
// any of its sources or the client package it compiles in: `npm start` runs it first (prestart), so a
// fresh clone serves /console, and an unchanged tree costs one directory walk instead of a build.
// `--force` rebuilds anyway.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const consoleDir = join(root, 'services/api/console');
const built = join(consoleDir, 'dist/index.html');
const sources = [
  join(consoleDir, 'src'),
  join(consoleDir, 'index.html'),
  join(consoleDir, 'vite.config.mjs'),
  join(root, 'libs/client/src'),
  join(root, 'package-lock.json'),
];

/** The newest modification time under a file or folder. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const stale = process.argv.includes('--force') || !existsSync(built) || Math.max(...sources.map(newest)) > statSync(built).mtimeMs;
if (stale) {
  console.error('building the web console (services/api/console)');
  execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(consoleDir, 'vite.config.mjs')], {
    cwd: consoleDir,
    stdio: 'inherit',
  });
}
