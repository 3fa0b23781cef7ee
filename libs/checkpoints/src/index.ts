export * from './checkpoint.types';
