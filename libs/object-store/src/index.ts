export * from './object-store.port';
export * from './object-key';
export * from './object-store.config';
export * from './local/local-object-store';
export * from './minio/minio-object-store';
