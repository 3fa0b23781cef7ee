export * from './next-action';
export * from './conversation';
export * from './activities.types';
export * from './agent.signals';
export * from './agent-task.workflow';
