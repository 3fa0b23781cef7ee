export * from './checkpoint-reader';
export * from './checkpoint-archive';
export * from './pack-builder';
export * from './tree-node';
export * from './tar/pax-tar-stream';
