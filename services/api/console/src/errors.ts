import { AtsError } from '@agentic-task-service/client';

/** The API's own message when it sent one (e.g. "Invalid API key"), else what went wrong. */
export const messageOf = (error: unknown): string =>
  error instanceof AtsError ? error.message : error instanceof Error ? error.message : String(error);
