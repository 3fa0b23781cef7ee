export * from './task-command.executor';
