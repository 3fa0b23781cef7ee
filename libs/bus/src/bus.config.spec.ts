import { busConfigFromEnv } from './bus.config';

describe('busConfigFromEnv', () => {
  it('defaults to the in-process bus', () => {
    expect(busConfigFromEnv({})).toEqual({ kind: 'in-process' });
  });

  it('reads BUS=nats with NATS_URL, several servers comma-separated, and the local server by default', () => {
    expect(busConfigFromEnv({ BUS: 'nats', NATS_URL: 'nats://a:4222, nats://b:4222' })).toEqual({
      kind: 'nats',
      servers: ['nats://a:4222', 'nats://b:4222'],
    });
    expect(busConfigFromEnv({ BUS: 'nats' })).toEqual({ kind: 'nats', servers: ['nats://127.0.0.1:4222'] });
  });

  it('refuses an unknown BUS instead of silently staying in-process', () => {
    expect(() => busConfigFromEnv({ BUS: 'kafka' })).toThrow('BUS must be "in-process" or "nats", got "kafka"');
  });

  it('reads NATS_SUBJECT_PREFIX and refuses one that is not a subject prefix', () => {
    expect(busConfigFromEnv({ BUS: 'nats', NATS_SUBJECT_PREFIX: 'staging.eu' })).toEqual({
      kind: 'nats',
      servers: ['nats://127.0.0.1:4222'],
      namespace: 'staging.eu',
    });
    expect(() => busConfigFromEnv({ BUS: 'nats', NATS_SUBJECT_PREFIX: 'a b.>' })).toThrow('NATS_SUBJECT_PREFIX must be dotted words');
  });
});
