import { ToolArgumentError } from './tool.errors';

/**
 * Checks that `args` holds only the `allowed` names. Unknown names are refused rather than
 * ignored: a model that sends `old_text` for `oldText` learns it at once instead of by side effect.
 */
export function checkArgNames(args: Record<string, unknown>, allowed: readonly string[]): void {
  // The model adapter keeps arguments it could not parse as `{ _raw }` (see ModelToolCall).
  if (typeof args._raw === 'string') throw new ToolArgumentError(`the arguments are not valid JSON: ${args._raw.slice(0, 200)}`);
  const unknown = Object.keys(args).filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    throw new ToolArgumentError(
      `unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; expected ${allowed.join(', ')}`,
    );
  }
}

export function requiredString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (value === undefined || value === null) throw new ToolArgumentError(`missing required argument "${name}" (string)`);
  if (typeof value !== 'string') throw new ToolArgumentError(`argument "${name}" must be a string, got ${describeType(value)}`);
  return value;
}

export function optionalString(args: Record<string, unknown>, name: string, fallback: string): string {
  return args[name] === undefined || args[name] === null ? fallback : requiredString(args, name);
}

function describeType(value: unknown): string {
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
