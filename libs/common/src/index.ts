export * from './errors/app-error';
export * from './secrets/secret-vault';
export * from './ids';
export * from './config/env';
export * from './workspace/workspace-locator';
export * from './workspace/workspace-path';
export * from './workspace/workspace-path.error';
