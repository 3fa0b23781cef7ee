import type { ValidationOptions } from 'class-validator';
import { registerDecorator } from 'class-validator';
import { parseHostPatterns } from '@app/common';
import { cut } from './text-fault';

/** At most this many host patterns in `network.allow`: an allow-list, not a block-list of the internet. */
export const MAX_NETWORK_ALLOW_PATTERNS = 100;
/** Characters of one pattern at most: a DNS name's limit, port included. */
export const MAX_NETWORK_PATTERN_LENGTH = 253;

/**
 * The create field `network`: exactly `{"allow": [pattern, …]}`, each a host pattern the egress
 * proxy understands (`*`, `name`, `*.name`, each with an optional `:port`). Checked here, so the
 * sandbox never meets a pattern it cannot read.
 */
export function IsTaskNetwork(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTaskNetwork',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => explainNetwork(value) === undefined,
        defaultMessage: (args) => explainNetwork(args?.value) ?? 'network is invalid',
      },
    });
}

export function explainNetwork(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'network must be an object: {"allow": ["host pattern", …]}';
  const extra = Object.keys(value).find((key) => key !== 'allow');
  if (extra !== undefined) return `network: unknown field "${cut(extra)}" (only "allow")`;
  const { allow } = value as { allow?: unknown };
  if (!Array.isArray(allow)) return 'network.allow must be an array of host patterns ([] lets nothing out)';
  if (allow.length > MAX_NETWORK_ALLOW_PATTERNS) return `network.allow must have at most ${MAX_NETWORK_ALLOW_PATTERNS} patterns`;
  const notString = allow.findIndex((p) => typeof p !== 'string');
  if (notString >= 0) return `network.allow[${notString}] must be a string`;
  for (const [i, pattern] of (allow as string[]).entries()) {
    if (pattern.length > MAX_NETWORK_PATTERN_LENGTH) return `network.allow[${i}] must be at most ${MAX_NETWORK_PATTERN_LENGTH} characters`;
    // Stored and shown back as given: a pattern the proxy would read differently (spaces) is refused.
    const invalid = () =>
      `network.allow[${i}]: "${cut(pattern)}" is not a host pattern (*, a name, or *.name, each with an optional :port)`;
    if (pattern !== pattern.trim()) return invalid();
    try {
      parseHostPatterns([pattern], 'network.allow');
    } catch {
      return invalid();
    }
  }
  return undefined;
}
