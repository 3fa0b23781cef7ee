import { dataDirFromEnv, intFromEnv } from '@app/common';

/** The API's settings (README "Configuration" lists each). */
export class ApiConfig {
  readonly port: number;
  readonly dataDir: string;
  readonly uploadMaxBytes: number;
  readonly uploadMaxFiles: number;
  readonly sseKeepAliveMs: number;
  readonly listMaxLimit = 100;

  constructor(env: NodeJS.ProcessEnv) {
    this.port = intFromEnv(env, 'PORT', 3000);
    this.dataDir = dataDirFromEnv(env);
    this.uploadMaxBytes = intFromEnv(env, 'UPLOAD_MAX_BYTES', 104_857_600, { min: 1 });
    this.uploadMaxFiles = intFromEnv(env, 'UPLOAD_MAX_FILES', 100, { min: 1 });
    this.sseKeepAliveMs = intFromEnv(env, 'SSE_KEEPALIVE_MS', 15_000, { min: 10 });
  }
}
