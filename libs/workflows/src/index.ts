export * from './next-action';
export * from './turn-of';
export * from './turn-admission';
export * from './conversation';
export * from './activities.types';
export * from './agent.signals';
export * from './agent-turn.workflow';
