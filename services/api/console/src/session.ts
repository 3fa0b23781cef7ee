import { AtsClient } from '@agentic-task-service/client';

// The API key lives in sessionStorage only: gone when the tab closes, never in the URL, never in
// a cookie (which the browser would send on its own), never in localStorage.

const KEY = 'ats-console-api-key';

export const savedApiKey = (): string | null => sessionStorage.getItem(KEY);
export const saveApiKey = (apiKey: string): void => sessionStorage.setItem(KEY, apiKey);
export const forgetApiKey = (): void => sessionStorage.removeItem(KEY);

/** A client of this same origin (the console is served by the API it talks to). */
export const clientFor = (apiKey: string): AtsClient => new AtsClient({ baseUrl: location.origin, apiKey });
