import { DynamicModule, Global, Inject, Injectable, Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { join } from 'node:path';
import { SecretVault, SecretsKeyring, TaskSecrets, currentLogContext, dataDirFromEnv, loadSecretsKeyring } from '@app/common';
import { EVENT_STORE, EventStore, createEventStoreFromConfig } from '@app/event-store';
import { MESSAGE_BUS, MessageBus, busConfigFromEnv, createBus } from '@app/bus';
import { MODEL_PROVIDER, createModelProviderFromEnv, describeModelConfig } from '@app/model-provider';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor, decidePolicyFromEnv } from '@app/task-commands';
import { OBJECT_STORE, ObjectStore, createObjectStore, objectStoreConfigFromEnv } from '@app/object-store';
import { Readiness, ServiceMetrics, instrumentBus, instrumentEventStore, instrumentModelProvider, recordTaskEvents } from '@app/metrics';
import type { ContentRedactor } from '@app/tracing';
import { captureGenAiContentFromEnv, genAiTargetFromEnv, traceBus, traceModelProvider } from '@app/tracing';
import { RUNTIME_ENV } from './runtime.tokens';
import { busAppendNotifications, liveNotificationsFromEnv } from './bus-append-notifications';

/** A stream nobody writes: reading its revision is the event store's readiness probe. */
const READINESS_PROBE_STREAM = 'readiness-probe';

/** Starts the shared read model once the store is up, and closes everything in reverse order. */
@Injectable()
class RuntimeLifecycle implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Runtime');

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(RUNTIME_ENV) private readonly env: NodeJS.ProcessEnv,
    @Inject(OBJECT_STORE) private readonly objects: ObjectStore,
    private readonly views: TaskViewsStore,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.views.start();
    this.logger.log(`read model at position ${this.views.position}; model: ${describeModelConfig(this.env)}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.views.stop();
    await this.bus.close();
    await this.objects.close?.();
    await this.store.close();
  }
}

export interface RuntimeOptions {
  /** The all-in-one mode: with no SECRETS_KEY configured, generate one under DATA_DIR on first start. */
  readonly generateSecretsKey?: boolean;
}

/**
 * The ports every service shares, with adapters chosen by configuration (EVENT_STORE, BUS,
 * OBJECT_STORE; the orchestrator picks its RUNNER). The defaults are the all-in-one mode's:
 * embedded event store, in-process bus, local files; nothing external is needed.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(env: NodeJS.ProcessEnv = process.env, options: RuntimeOptions = {}): DynamicModule {
    const dataDir = dataDirFromEnv(env);
    const secretsLogger = new Logger('Secrets');
    return {
      module: RuntimeModule,
      providers: [
        { provide: RUNTIME_ENV, useValue: env },
        // One registry per application: the all-in-one mode serves one /metrics for all its services.
        { provide: ServiceMetrics, useFactory: () => new ServiceMetrics() },
        {
          provide: Readiness,
          inject: [EVENT_STORE, MESSAGE_BUS],
          useFactory: (store: EventStore, bus: MessageBus) => {
            const readiness = new Readiness();
            readiness.add('eventStore', () => store.streamRevision(READINESS_PROBE_STREAM));
            if (bus.ping) readiness.add('bus', () => bus.ping!());
            return readiness;
          },
        },
        {
          provide: EVENT_STORE,
          inject: [MESSAGE_BUS, ServiceMetrics],
          useFactory: async (bus: MessageBus, metrics: ServiceMetrics) =>
            instrumentEventStore(
              await createEventStoreFromConfig(
                env,
                liveNotificationsFromEnv(env) === 'bus' ? (storeId) => busAppendNotifications(bus, storeId) : undefined,
              ),
              metrics,
            ),
        },
        {
          provide: MESSAGE_BUS,
          inject: [ServiceMetrics],
          useFactory: async (metrics: ServiceMetrics) => {
            const config = busConfigFromEnv(env);
            return traceBus(instrumentBus(await createBus(config), metrics), config.kind);
          },
        },
        {
          provide: MODEL_PROVIDER,
          inject: [ServiceMetrics, SecretVault],
          useFactory: (metrics: ServiceMetrics, vault: SecretVault) => {
            const target = genAiTargetFromEnv(env);
            const captureContent = captureGenAiContentFromEnv(env) ? taskScopedRedactor(vault) : undefined;
            return traceModelProvider(instrumentModelProvider(createModelProviderFromEnv(env), metrics, target), {
              target,
              captureContent,
            });
          },
        },
        { provide: OBJECT_STORE, useFactory: () => createObjectStore(objectStoreConfigFromEnv(env)) },
        { provide: SecretVault, useValue: new SecretVault() },
        {
          provide: SecretsKeyring,
          useFactory: () =>
            loadSecretsKeyring(env, {
              dataDir,
              generateIfMissing: options.generateSecretsKey ?? false,
              log: (level, message) => secretsLogger[level](message),
            }),
        },
        {
          provide: TaskSecrets,
          inject: [SecretVault, SecretsKeyring],
          useFactory: (vault: SecretVault, keyring: SecretsKeyring) => new TaskSecrets(vault, keyring),
        },
        {
          provide: TaskViewsStore,
          inject: [EVENT_STORE],
          useFactory: (store: EventStore) =>
            new TaskViewsStore(store, {
              path: join(dataDir, 'read-models', 'task-views.sqlite3'),
              replaces: join(dataDir, 'read-models', 'task-views.json'),
            }),
        },
        {
          provide: TaskCommandExecutor,
          inject: [EVENT_STORE, ServiceMetrics],
          useFactory: (store: EventStore, metrics: ServiceMetrics) =>
            new TaskCommandExecutor(store, decidePolicyFromEnv(env), (history, appended) => recordTaskEvents(metrics, history, appended)),
        },
        RuntimeLifecycle,
      ],
      exports: [
        RUNTIME_ENV,
        EVENT_STORE,
        MESSAGE_BUS,
        MODEL_PROVIDER,
        OBJECT_STORE,
        SecretVault,
        TaskSecrets,
        TaskViewsStore,
        TaskCommandExecutor,
        ServiceMetrics,
        Readiness,
      ],
    };
  }
}

/**
 * Redacts with the secrets of the task whose step is running: the agent loop runs each step in
 * that task's log context, as the logger's redaction relies on too. Outside a task, nothing.
 */
function taskScopedRedactor(vault: SecretVault): ContentRedactor {
  return (value) => {
    const taskId = currentLogContext()?.taskId;
    return taskId === undefined ? undefined : vault.redactDeep(taskId, value);
  };
}
