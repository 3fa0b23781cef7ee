export * from './task-command.executor';
export * from './turn-admission.config';
