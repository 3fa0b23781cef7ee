// Every environment variable the processes read, with what docs/operations/configuration.md says of
// it: scripts/write-configuration-docs.ts renders that page from this list, and
// test/docs/configuration-reference.spec.ts holds the list to the code (each name read is here, each
// name here is read, and an integer's documented default is its reader's fallback). Data only: a new
// setting gets its row here, then `npm run docs:config`.

/** What a setting is about; `cli` rows are the `ats` command line's, listed in a table of their own. */
export type SettingGroup =
  | 'http'
  | 'data'
  | 'auth'
  | 'secrets'
  | 'model'
  | 'limits'
  | 'observability'
  | 'uploads'
  | 'lifecycle'
  | 'webhooks'
  | 'object-store'
  | 'bus'
  | 'runner'
  | 'web-tools'
  | 'mcp'
  | 'sandbox'
  | 'event-store'
  | 'cli';

/** One row of the reference: a setting, or several read together (`PORT`, `HOST`). */
export interface CatalogedSetting {
  readonly group: SettingGroup;
  readonly names: readonly string[];
  /** Markdown. */
  readonly meaning: string;
  /** Markdown: one default per name, in the same order, or a single one standing for all of them. */
  readonly defaults: readonly string[];
}

/** In the order the page lists them. */
export const SETTINGS_CATALOG: readonly CatalogedSetting[] = [
  {
    group: 'http',
    names: ['PORT', 'HOST'],
    meaning: 'where the API listens',
    defaults: ['`3000`', '`127.0.0.1`'],
  },
  {
    group: 'data',
    names: ['DATA_DIR'],
    meaning:
      "the folder a process keeps its own files in; the all-in-one service keeps everything there: the event store (`eventstore/`), the read models (`read-models/`), workspaces (`workspaces/`), upload staging (`uploads/`, `sandbox-uploads/`), artifacts and snapshots with `OBJECT_STORE=local` (`objects/`), the webhook dispatcher's checkpoint (`webhooks/`), the generated key's hash (`api-keys.json`) and the generated secrets key (`secrets.key`)",
    defaults: ['`./data`'],
  },
  {
    group: 'auth',
    names: ['API_KEYS'],
    meaning: 'comma-separated keys, each its own tenant (kept only as SHA-256 hashes in memory)',
    defaults: ['generated once'],
  },
  {
    group: 'auth',
    names: ['API_KEYS_FILE'],
    meaning: 'JSON `{"tenants": {"acme": ["<sha256 hex of a key>", …]}}`: several keys per tenant',
    defaults: ['—'],
  },
  {
    group: 'secrets',
    names: ['SECRETS_KEY'],
    meaning:
      'the key that seals task secrets at rest: 32 random bytes, base64 (`openssl rand -base64 32`); the same on every api, orchestrator and sandbox process (see [Secrets at rest](security.md#secrets-at-rest))',
    defaults: ['all-in-one: generated once in `DATA_DIR/secrets.key`; distributed: none (creates with secrets are refused)'],
  },
  {
    group: 'secrets',
    names: ['SECRETS_KEY_FILE'],
    meaning: 'a file holding that key instead (not with `SECRETS_KEY`)',
    defaults: ['—'],
  },
  {
    group: 'secrets',
    names: ['SECRETS_KEY_PREVIOUS'],
    meaning: 'comma-separated keys rotated out: they still open the envelopes they sealed, never seal new ones',
    defaults: ['none'],
  },
  {
    group: 'model',
    names: ['LLM_PROVIDER'],
    meaning:
      '`openai-compatible`, `openai`, `ollama` (chat-completions) or `anthropic` (Messages API); see [Model providers](model-providers.md)',
    defaults: ['chosen from what is set'],
  },
  {
    group: 'model',
    names: ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL'],
    meaning:
      'the endpoint (chat-completions: the base ending in `/v1`; `anthropic`: the origin, `/v1/messages` is appended), its key (`anthropic`: sent as `x-api-key`, required), the model',
    defaults: [
      '`openai`: `https://api.openai.com/v1`, `ollama`: `http://127.0.0.1:11434/v1`, `anthropic`: `https://api.anthropic.com`; key and model: —',
    ],
  },
  {
    group: 'model',
    names: ['LLM_STREAM', 'LLM_TIMEOUT_MS', 'LLM_MAX_RETRIES'],
    meaning:
      'streaming on/off, per-attempt timeout, retries on 429/5xx/timeouts. A non-streamed answer (or an error body) larger than 16 MiB fails the call at once, without retries: no chat completion is that large',
    defaults: ['`true`', '`120000`', '`4`'],
  },
  {
    group: 'model',
    names: ['LLM_MAX_TOKENS'],
    meaning: '`anthropic` only: the `max_tokens` of each request, the most tokens one answer may have (the Messages API requires it)',
    defaults: ['`8192`'],
  },
  {
    group: 'model',
    names: ['MODEL_PRICES'],
    meaning:
      'JSON `{"<model>": {"input", "output", "cacheRead"?, "cacheWrite"?}}` in USD per million tokens, merged over the built-in table of list prices (see [Prices and cost](model-providers.md#prices-and-cost)); bad JSON or a bad entry stops the orchestrator (the all-in-one service) at start, naming it; set it on the orchestrator instances',
    defaults: ['the built-in table'],
  },
  {
    group: 'limits',
    names: ['MAX_STEPS_PER_TURN'],
    meaning: 'model calls per turn before it fails with a clear error',
    defaults: ['`50`'],
  },
  {
    group: 'limits',
    names: ['TASK_MAX_TOKENS'],
    meaning:
      'token budget of a task created without `maxTokens`: total tokens over all its turns; reached, the turn fails (see [Limits and budgets](limits.md))',
    defaults: ['unlimited'],
  },
  {
    group: 'limits',
    names: ['TASK_MAX_COST_USD'],
    meaning:
      'cost budget in USD of a task created without `maxCostUsd`: what its priced model calls cost over all its turns (see [Prices and cost](model-providers.md#prices-and-cost)); reached, the turn fails. A positive number',
    defaults: ['unlimited'],
  },
  {
    group: 'limits',
    names: ['TASK_MAX_TOKENS_CAP'],
    meaning:
      "the operator's cap on any `maxTokens` of a create or follow-up (more: `400 VALIDATION_ERROR` naming it); without `TASK_MAX_TOKENS`, also the budget of a task created without one. A `TASK_MAX_TOKENS` above it is refused at start",
    defaults: ['none'],
  },
  {
    group: 'limits',
    names: ['MAX_RUNNING_TASKS_PER_TENANT'],
    meaning:
      'turns of one tenant running at once; more wait as `pending`, in order (see [Limits and budgets](limits.md)); set it on every API and orchestrator instance',
    defaults: ['unlimited'],
  },
  {
    group: 'limits',
    names: ['RATE_LIMIT_PER_MINUTE'],
    meaning:
      'creates + follow-ups per tenant per minute, shared by every API instance; over it: `429 RATE_LIMITED` with `Retry-After` (see [Limits and budgets](limits.md))',
    defaults: ['unlimited'],
  },
  {
    group: 'limits',
    names: ['MAX_SCHEDULES_PER_TENANT'],
    meaning:
      'schedules a tenant may have at once (deleted ones do not count); over it, a create answers `409 CONFLICT` (see [Schedules](../api.md#schedules))',
    defaults: ['`100`'],
  },
  {
    group: 'limits',
    names: ['SCHEDULE_MIN_INTERVAL_MS'],
    meaning: "the shortest time a schedule's cron may leave between two runs; a tighter cron is refused with `400 VALIDATION_ERROR`",
    defaults: ['`60000`'],
  },
  {
    group: 'limits',
    names: ['SCHEDULE_CATCHUP_MS'],
    meaning:
      'a due time missed while the service was down still fires at start if it is younger than this; older ones are recorded `skipped`',
    defaults: ['`3600000`'],
  },
  {
    group: 'limits',
    names: ['RATE_LIMIT_WINDOW_MS'],
    meaning: "for tests only: shortens the rate limit's minute (at least 600)",
    defaults: ['`60000`'],
  },
  {
    group: 'limits',
    names: ['APPROVAL_TIMEOUT_MS'],
    meaning: 'a tool call nobody approves or declines this long after it was requested is treated as declined',
    defaults: ['`86400000` (24 h)'],
  },
  {
    group: 'limits',
    names: ['TOOL_TIMEOUT_MS'],
    meaning: 'bound on one tool call, bus round trip, restore and artifact scan included',
    defaults: ['`600000`'],
  },
  {
    group: 'observability',
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    meaning: 'OTLP/HTTP receiver for OpenTelemetry traces; unset, tracing is off (see [Tracing](observability.md#tracing))',
    defaults: ['off'],
  },
  {
    group: 'observability',
    names: ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    meaning: 'the full traces URL instead of `<endpoint>/v1/traces`',
    defaults: ['—'],
  },
  {
    group: 'observability',
    names: ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'],
    meaning:
      "`true`: the conversation, the model's answers and tool arguments and results go on the GenAI spans, each task's secrets redacted (see [GenAI spans and metrics](observability.md#genai-spans-and-metrics))",
    defaults: ['`false`'],
  },
  {
    group: 'uploads',
    names: ['UPLOAD_MAX_BYTES', 'UPLOAD_MAX_FILES'],
    meaning: 'largest create body (413 past it), most files per create',
    defaults: ['`104857600`', '`100`'],
  },
  {
    group: 'uploads',
    names: ['ZIP_MAX_ENTRIES', 'ZIP_MAX_UNCOMPRESSED_BYTES', 'ZIP_MAX_RATIO'],
    meaning: 'caps on an uploaded archive',
    defaults: ['`10000`', '`1073741824`', '`200`'],
  },
  {
    group: 'http',
    names: ['SSE_KEEPALIVE_MS'],
    meaning: 'keep-alive comment interval',
    defaults: ['`15000`'],
  },
  {
    group: 'http',
    names: ['HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS'],
    meaning:
      'a request whose headers, or whose headers and body, have not all arrived this long after it began is answered `408` and its connection closed (slow-client protection; `HTTP_REQUEST_TIMEOUT_MS` bounds receiving the request, not the answer, so a long stream is unaffected, but a large upload must arrive within it; `0`: no bound). The headers timeout may not exceed the request timeout',
    defaults: ['`60000`', '`300000`'],
  },
  {
    group: 'lifecycle',
    names: ['SHUTDOWN_TIMEOUT_MS'],
    meaning:
      'longest time from SIGTERM to exit, on every process: what is in flight gets until then to finish (see [Shutdown and rolling restarts](deployment.md#shutdown-and-rolling-restarts)); at least `1000`',
    defaults: ['`10000`'],
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_URL'],
    meaning: 'the webhook receiver of tasks created without `webhookUrl` (recorded with each task at creation)',
    defaults: ['none'],
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_SECRET'],
    meaning: '`whsec_` + base64 of 24–64 random bytes: the Standard Webhooks signing key; required for any webhook',
    defaults: ['none'],
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_TIMEOUT_MS', 'WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_MAX_ATTEMPTS'],
    meaning: "one attempt's bound; the wait before retry n is base × 2^(n−1) plus up to 20% jitter; attempts before a message is `failed`",
    defaults: ['`10000`', '`1000`', '`8`'],
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_ALLOW_HOSTS'],
    meaning: 'comma-separated `host:port` receivers allowed on private or loopback addresses',
    defaults: ['none'],
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_MAX_CONNECTIONS'],
    meaning: 'sockets open to one receiver (scheme, host, port) at a time; a burst pipelines up to 32 requests on each',
    defaults: ['`4`'],
  },
  {
    group: 'sandbox',
    names: ['CHECKPOINT_RETENTION'],
    meaning:
      'which checkpoints of each task stay (files as of an event, forks; docs/api.md "Time travel"): `all`, `last:N` or `age:N` with a unit `s`, `m`, `h` or `d`; the last one always stays. The sandbox removes what no kept checkpoint names when a task\'s sandbox expires',
    defaults: ['`all`'],
  },
  {
    group: 'sandbox',
    names: ['CHECKPOINT_GC_GRACE_MS'],
    meaning: 'checkpoint objects younger than this are never removed (a checkpoint stored whose event is not appended yet)',
    defaults: ['`3600000`'],
  },
  {
    group: 'object-store',
    names: ['OBJECT_STORE'],
    meaning: '`local` (files under `DATA_DIR/objects`) or `minio`',
    defaults: ['`local`'],
  },
  {
    group: 'object-store',
    names: ['MINIO_ENDPOINT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'MINIO_BUCKET'],
    meaning: 'with `OBJECT_STORE=minio`: `http(s)://host:port`, credentials, bucket (created if missing)',
    defaults: ['—', '—', '—', '`ats`'],
  },
  {
    group: 'bus',
    names: ['BUS'],
    meaning: '`in-process` or `nats` (the services talk over NATS)',
    defaults: ['`in-process`'],
  },
  {
    group: 'bus',
    names: ['NATS_URL'],
    meaning: 'with `BUS=nats`: server URL(s), comma-separated for a cluster',
    defaults: ['`nats://127.0.0.1:4222`'],
  },
  {
    group: 'bus',
    names: ['NATS_SUBJECT_PREFIX'],
    meaning:
      "with `BUS=nats`: every subject goes under `<prefix>.`, so deployments sharing one NATS (staging and production, test runs) never take each other's calls",
    defaults: ['none'],
  },
  {
    group: 'bus',
    names: ['LIVE_NOTIFICATIONS'],
    meaning:
      'with `EVENT_STORE=postgres`: who tells the other processes that the store grew, `bus` (a NATS fact carrying only the position, plus a 1 s poll of the last position) or `store` (PostgreSQL `LISTEN/NOTIFY`)',
    defaults: ['`bus` with `BUS=nats`, else `store`'],
  },
  {
    group: 'runner',
    names: ['RUNNER'],
    meaning:
      "`in-process` or `temporal` (agent loops and schedules as Temporal workflows; the API runs the schedules' worker, on the task queue `<TEMPORAL_TASK_QUEUE>-schedules`)",
    defaults: ['`in-process`'],
  },
  {
    group: 'runner',
    names: ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE'],
    meaning: 'with `RUNNER=temporal`: frontend `host:port` (required), namespace, task queue',
    defaults: ['—', '`default`', '`agent-loop`'],
  },
  {
    group: 'observability',
    names: ['HEALTH_PORT'],
    meaning:
      'orchestrator, sandbox, artifacts processes: serve `GET /healthz`, `/readyz` and `/metrics` on this port (0: off; `503` until the process has started; a port already in use stops it at start with one line naming `HEALTH_PORT`)',
    defaults: ['`0`'],
  },
  {
    group: 'observability',
    names: ['LOG_LEVEL'],
    meaning:
      'least severe level printed: `fatal`, `error`, `warn`, `log` (or `info`), `debug` or `verbose` (or `trace`); more severe levels are printed too. `debug` adds a line per answered request, per agent step and per tool run (see [Logs](observability.md#logs))',
    defaults: ['`log`'],
  },
  {
    group: 'observability',
    names: ['LOG_FORMAT'],
    meaning: '`json` (one JSON object per line on stdout) or `pretty` (coloured text for a person)',
    defaults: ['`pretty` when stdout is a terminal, else `json`'],
  },
  {
    group: 'web-tools',
    names: ['WEB_FETCH_ALLOW_HOSTS'],
    meaning: 'comma-separated `host:port` that `web_fetch` may reach although private (loopback, LAN, …)',
    defaults: ['none'],
  },
  {
    group: 'web-tools',
    names: ['WEB_FETCH_MAX_BYTES', 'WEB_FETCH_TIMEOUT_MS', 'WEB_FETCH_MAX_REDIRECTS', 'WEB_FETCH_MAX_OUTPUT_CHARS'],
    meaning: '`web_fetch` bounds: body bytes read (after decompression), whole fetch, redirects followed, characters returned',
    defaults: ['`2097152`', '`15000`', '`5`', '`100000`'],
  },
  {
    group: 'web-tools',
    names: ['SEARCH_PROVIDER'],
    meaning: '`searxng`, `brave` or `tavily`; unset: no `web_search` tool',
    defaults: ['—'],
  },
  {
    group: 'web-tools',
    names: ['SEARXNG_URL'],
    meaning: 'SearXNG base URL (`json` must be in its `search.formats`; no credentials in the URL, it may appear in error messages)',
    defaults: ['—'],
  },
  {
    group: 'web-tools',
    names: ['BRAVE_API_KEY', 'BRAVE_API_URL'],
    meaning: 'Brave Search API key (sent as `X-Subscription-Token`), endpoint',
    defaults: ['—', '`https://api.search.brave.com/res/v1/web/search`'],
  },
  {
    group: 'web-tools',
    names: ['TAVILY_API_KEY', 'TAVILY_API_URL'],
    meaning: 'Tavily API key (sent as a bearer token), endpoint',
    defaults: ['—', '`https://api.tavily.com/search`'],
  },
  {
    group: 'web-tools',
    names: ['WEB_SEARCH_MAX_RESULTS', 'WEB_SEARCH_TIMEOUT_MS'],
    meaning: 'results per search (at most 20), time per search',
    defaults: ['`10`', '`10000`'],
  },
  {
    group: 'mcp',
    names: ['MCP_SERVERS'],
    meaning:
      'JSON: the service\'s own MCP servers, `{"<name>": {"command", "args", "env", "mounts", "network"}}` (stdio; `mounts`: absolute host paths it sees read-only inside bubblewrap, `network` default `true`) or `{"<name>": {"url", "headers"}}` (Streamable HTTP)',
    defaults: ['none'],
  },
  {
    group: 'mcp',
    names: ['MCP_ALLOW_HOSTS'],
    meaning: "comma-separated `host:port` a task's own MCP servers may be on although private",
    defaults: ['none'],
  },
  {
    group: 'mcp',
    names: ['MCP_CONNECT_TIMEOUT_MS', 'MCP_CALL_TIMEOUT_MS', 'MCP_MAX_OUTPUT_CHARS'],
    meaning: 'MCP bounds: connect and list tools, one call, characters of a result returned',
    defaults: ['`15000`', '`120000`', '`100000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_PROVIDER'],
    meaning: '`bubblewrap`, or `unsafe-host` (NO isolation, only when chosen explicitly)',
    defaults: ['`bubblewrap`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_NETWORK'],
    meaning:
      '`off` (or `false`): sandboxed commands have no network; `egress`: only through the sandbox service\'s egress proxy, per-task allow-lists, every connection an `egress` event ([docs/api.md, "Network"](../api.md#network)). Any other value, `true` included, stops the service at start, naming the two',
    defaults: ['`off`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_EGRESS_ALLOW'],
    meaning: 'comma-separated host patterns (`*`, `name`, `*.name`, each with an optional `:port`) for tasks created without `network`',
    defaults: ['`*` (any public host)'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_EGRESS_ALLOW_HOSTS'],
    meaning:
      "comma-separated `host:port` the egress proxy may reach although loopback, private, link-local or the service's own (an internal package mirror; tests)",
    defaults: ['none'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_EGRESS_MAX_CONNECTIONS'],
    meaning: 'connections of one command open at once through the egress proxy; one more is refused',
    defaults: ['`64`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_EGRESS_IDLE_TIMEOUT_MS'],
    meaning: 'an egress connection with no byte either way this long is closed',
    defaults: ['`60000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_LEASE_TTL_MS'],
    meaning: "how long a sandbox instance's hold on a task outlives its last renewal: the longest a call waits after its holder died",
    defaults: ['`15000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_TIMEOUT_MS'],
    meaning: "wall clock per command (a call's `timeoutMs` may only shorten it)",
    defaults: ['`120000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_CPU_SECONDS'],
    meaning: 'CPU time per command',
    defaults: ['`60`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_MEMORY_BYTES'],
    meaning:
      "memory of a task's processes and its `/tmp` and `/dev/shm` together (a cgroup; address space per process where none is delegated)",
    defaults: ['`2147483648`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_MAX_PROCESSES'],
    meaning: 'processes of a task at once (a cgroup; RLIMIT_NPROC of its uid where none is delegated)',
    defaults: ['`256`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_MAX_OUTPUT_BYTES'],
    meaning:
      'output kept per command (the rest is dropped and marked); a tool reply is also cut, and marked, to fit 960 KiB of JSON, so it always fits one NATS message (default max_payload 1 MiB; JSON takes up to 6 bytes per control character)',
    defaults: ['`1048576`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_DISK_QUOTA_BYTES'],
    meaning: 'the whole workspace (and the largest single file), and the artifacts stored for one task',
    defaults: ['`1073741824`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_UID_BASE', 'SANDBOX_UID_COUNT'],
    meaning: 'range of the per-task sandbox uids (one per live workspace on the host)',
    defaults: ['`200000`', '`50000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_RUNTIME_DIR'],
    meaning: 'host-wide folder of workspace mount points and uid claims, shared by every sandbox instance on the host',
    defaults: ['`/run/agentic-task-service`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_WORKSPACE_FS'],
    meaning:
      '`auto`: each workspace an ext4 filesystem of its own (loop device) where the host has them; `folder`: a watched folder (needed when hosts share a workspace volume)',
    defaults: ['`auto`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_CGROUPS'],
    meaning: '`auto`: a cgroup per task where one is delegated (v2, or v1 memory + pids); `off`: rlimits per process only',
    defaults: ['`auto`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_IDLE_TTL_MS'],
    meaning: 'a sandbox idle this long is snapshotted and torn down',
    defaults: ['`900000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_SNAPSHOT_MAX_BYTES', 'SANDBOX_SNAPSHOT_TIMEOUT_MS'],
    meaning: 'bounds on one snapshot or restore',
    defaults: ['`2147483648`', '`300000`'],
  },
  {
    group: 'sandbox',
    names: ['SANDBOX_SNAPSHOT_MAX_ATTEMPTS'],
    meaning:
      'idle snapshots of a task that may fail in a row (1 to 20; retried one `SANDBOX_IDLE_TTL_MS` after a failure, doubling) before `SandboxSnapshotFailed` gives up until the task is used again',
    defaults: ['`4`'],
  },
  {
    group: 'event-store',
    names: ['EVENT_STORE'],
    meaning:
      '`embedded` (SQLite in `DATA_DIR/eventstore/events.sqlite3`, one process per `DATA_DIR`), `postgres` (with `DATABASE_URL`; tables in `EVENT_STORE_SCHEMA`, default `public`) or `esdb` (EventStoreDB at `ESDB_URL`, e.g. `esdb://host:2113?tls=false`; streams named `ESDB_STREAM_PREFIX…`)',
    defaults: ['`embedded`'],
  },
  {
    group: 'event-store',
    names: ['DATABASE_URL', 'EVENT_STORE_SCHEMA'],
    meaning: 'with `EVENT_STORE=postgres`: the PostgreSQL connection string (required), the schema of the tables',
    defaults: ['—', '`public`'],
  },
  {
    group: 'event-store',
    names: ['ESDB_URL', 'ESDB_STREAM_PREFIX'],
    meaning: 'with `EVENT_STORE=esdb`: the EventStoreDB connection string (required), the prefix of stream names (the task id follows it)',
    defaults: ['—', '`agentic.`'],
  },
  {
    group: 'cli',
    names: ['ATS_URL', 'ATS_API_KEY'],
    meaning:
      'the service `ats` talks to, and its API key; each, when unset, is what `ats login` stored (see [From the terminal](../guide/cli.md))',
    defaults: ['`http://127.0.0.1:3000`', '—'],
  },
  {
    group: 'cli',
    names: ['XDG_CONFIG_HOME'],
    meaning: '`ats login` stores the URL and key in `$XDG_CONFIG_HOME/ats/config.json` (an absolute path; otherwise `~/.config` is used)',
    defaults: ['`~/.config`'],
  },
];
