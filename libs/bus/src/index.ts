export * from './bus.port';
export * from './bus.tokens';
export * from './bus.config';
// The NATS bus is left out: createBus loads it when chosen (import it from '@app/bus/nats/nats-bus').
export * from './request-until-delivered';
export * from './namespaced-bus';
