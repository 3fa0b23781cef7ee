export * from './task-views.store';
export * from './projection-checkpoint-file';
