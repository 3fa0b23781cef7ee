export * from './subjects';
export * from './messages';
export * from './sandbox-lease';
