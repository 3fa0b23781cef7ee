export * from './checkpoint-reader';
export * from './pack-builder';
export * from './tree-node';
export * from './checkpoint-archive';
