export * from './checkpoint.types';
export * from './tar/pax-tar-stream';
