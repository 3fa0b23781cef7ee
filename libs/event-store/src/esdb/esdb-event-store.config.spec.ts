import { createEventStoreFromConfig } from '../event-store.config';
import { createEsdbEventStore } from './esdb-event-store';

// Only the checks made before connecting: the store itself runs in esdb-event-store.server-spec.ts.
describe('EventStoreDB configuration', () => {
  it('EVENT_STORE=esdb without ESDB_URL names the missing variable and its form', async () => {
    await expect(createEventStoreFromConfig({ EVENT_STORE: 'esdb' })).rejects.toThrow(
      'EVENT_STORE=esdb needs ESDB_URL, a connection string such as esdb://127.0.0.1:2113?tls=false',
    );
  });

  it('lists esdb among the accepted EVENT_STORE values', async () => {
    await expect(createEventStoreFromConfig({ EVENT_STORE: 'eventstore' })).rejects.toThrow(
      'EVENT_STORE must be "embedded", "postgres" or "esdb", not "eventstore"',
    );
  });

  it('rejects a stream prefix that would name system streams before connecting', async () => {
    await expect(
      createEventStoreFromConfig({ EVENT_STORE: 'esdb', ESDB_URL: 'esdb://127.0.0.1:1?tls=false', ESDB_STREAM_PREFIX: '$all' }),
    ).rejects.toThrow(/must not start with "\$"/);
  });

  it('rejects a malformed connection string before connecting', async () => {
    await expect(createEsdbEventStore({ connectionString: 'postgres://127.0.0.1:5432' })).rejects.toThrow(/esdb/);
  });
});
