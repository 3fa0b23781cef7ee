// Only what runs in Temporal's workflow sandbox (the runner bundles workflows.ts): the agent's own
// next-action and conversation logic lives with its user, services/orchestrator; the firing of a
// schedule lives with the schedules, services/api.
export * from './activities.types';
export * from './agent.signals';
export * from './agent-turn.workflow';
export * from './schedule.signals';
export * from './schedule-clock.workflow';
export * from './schedule-shards';
