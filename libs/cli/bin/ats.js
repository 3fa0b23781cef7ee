#!/usr/bin/env node
'use strict';
// The `ats` command (package.json "bin"). It runs the TypeScript source as `npm start` runs the
// service: ts-node without type checking (npm run typecheck does that), through SWC, with the
// one path alias the CLI uses. No build step, so `npx ats` works right after `npm ci`.
const { join } = require('node:path');

const root = join(__dirname, '..', '..', '..');
require('ts-node').register({ transpileOnly: true, swc: true, project: join(root, 'tsconfig.json') });
require('tsconfig-paths').register({ baseUrl: root, paths: { '@agentic-task-service/client': ['libs/client/src'] } });
require('../src/main.ts');
