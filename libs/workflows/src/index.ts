export * from './next-action';
export * from './conversation';
