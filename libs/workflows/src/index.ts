// Only what runs in Temporal's workflow sandbox (the runner bundles agent-turn.workflow.ts): the
// agent's own next-action and conversation logic lives with its user, services/orchestrator.
export * from './activities.types';
export * from './agent.signals';
export * from './agent-turn.workflow';
