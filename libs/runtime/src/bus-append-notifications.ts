import type { MessageBus } from '@app/bus';
import type { EventsAppendedNotice } from '@app/contracts';
import { SUBJECTS } from '@app/contracts';
import type { AppendNotifications } from '@app/event-store';

/**
 * "The store has grown" as facts on the bus (NATS in the distributed mode): every instance
 * hears every append, and its store reads the new events itself. `storeId` keeps deployments
 * that share one NATS from announcing positions of each other's stores.
 */
export function busAppendNotifications(bus: MessageBus, storeId: string): AppendNotifications {
  return {
    publish: (position) => bus.publish<EventsAppendedNotice>(SUBJECTS.taskEventsAppended, { store: storeId, position }),
    subscribe(onPosition) {
      const stop = bus.subscribe<EventsAppendedNotice>(SUBJECTS.taskEventsAppended, (notice) => {
        if (notice?.store === storeId && Number.isSafeInteger(notice.position) && notice.position > 0) onPosition(notice.position);
      });
      return () => {
        try {
          stop();
        } catch {
          // the bus closed first: nothing left to stop
        }
      };
    },
  };
}

/**
 * LIVE_NOTIFICATIONS=bus|store: who tells the processes sharing a PostgreSQL store that it grew.
 * Default: the bus when it is NATS (the distributed mode), else the store's own LISTEN/NOTIFY.
 */
export function liveNotificationsFromEnv(env: NodeJS.ProcessEnv): 'bus' | 'store' {
  const value = env.LIVE_NOTIFICATIONS || (env.BUS === 'nats' ? 'bus' : 'store');
  if (value !== 'bus' && value !== 'store') throw new Error(`LIVE_NOTIFICATIONS must be "bus" or "store", not "${value}"`);
  return value;
}
