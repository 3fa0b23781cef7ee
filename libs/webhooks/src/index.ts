export * from './webhook-secret';
export * from './sign';
export * from './retry-schedule';
export * from './webhook.config';
export * from './webhook-attempt';
export * from './webhook-sender';
