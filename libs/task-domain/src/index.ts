export * from './task.events';
export * from './task.state';
export * from './task.decider';
export * from './approval-rules';
export * from './projections/task-view.projection';
export * from './projections/public-event.projection';
