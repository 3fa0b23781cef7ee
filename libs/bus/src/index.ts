export * from './bus.port';
export * from './bus.tokens';
export * from './bus.config';
export * from './in-process/in-process-bus';
export * from './nats/nats-bus';
export * from './request-until-delivered';
export * from './namespaced-bus';
