'use strict';
// Runs initdb for a new PGlite database in the directory given as the only argument, then exits.
// Run in a short-lived child process (see create-pglite-database.ts): initdb takes a process to
// ~800 MiB RSS that is never given back, so the service only ever opens an existing database.
// Plain JavaScript so that it needs no TypeScript loader under ts-node, jest or compiled output.
const { PGlite } = require('@electric-sql/pglite');

async function main(dataDir) {
  if (!dataDir) throw new Error('usage: create-pglite-database.child.js <dataDir>');
  const db = new PGlite(dataDir);
  await db.waitReady;
  await db.close();
}

main(process.argv[2]).catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
