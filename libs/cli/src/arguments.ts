import { InvalidArgumentError } from 'commander';

// Parsers of option values, for commander: each throws InvalidArgumentError, which commander prints with the usage.

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `K=V` of --env, added to the ones before it. */
export function parseEnvPair(pair: string, previous: Record<string, string>): Record<string, string> {
  const at = pair.indexOf('=');
  const key = at < 0 ? pair : pair.slice(0, at);
  if (at < 0 || !ENV_NAME.test(key)) throw new InvalidArgumentError('expected K=V with K a variable name');
  return { ...previous, [key]: pair.slice(at + 1) };
}

/** A --secret NAME: the name only; its value comes from the environment or a prompt. */
export function parseSecretName(name: string, previous: string[]): string[] {
  if (!ENV_NAME.test(name))
    throw new InvalidArgumentError('expected the name of an environment variable (the value is never taken from the command line)');
  return [...previous, name];
}

export function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

/** A --limit: at least one. */
export function parseLimit(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number from 1');
  return Number(value);
}

/** An event id (--after of fork, --at of files): event ids start at 1. */
export function parseEventId(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected an event id (a whole number from 1)');
  return Number(value);
}

/** A --max-tokens budget: at least one token, as the API takes it (docs/api.md "Limits and budgets"). */
export function parseMaxTokens(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a number of tokens, a whole number from 1');
  return Number(value);
}

/** A --max-cost budget in USD: digits with an optional decimal point (`2.5`), more than 0, as the API takes it. */
export function parseMaxCostUsd(value: string): number {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value) || !(Number(value) > 0))
    throw new InvalidArgumentError('expected an amount in USD above 0, in digits with an optional decimal point (e.g. 2.5)');
  return Number(value);
}
