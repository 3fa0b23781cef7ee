// The module Temporal bundles (scripts/bundle-workflows.js, libs/runner's workflow-bundle.ts):
// every workflow our workers run. Each worker registers the ones of its task queue by name.
export { agentTurnWorkflow } from './agent-turn.workflow';
export { scheduleClockWorkflow } from './schedule-clock.workflow';
