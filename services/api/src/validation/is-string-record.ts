import type { ValidationOptions } from 'class-validator';
import { registerDecorator } from 'class-validator';
import { cut, textFault } from './text-fault';

export interface StringRecordRules {
  readonly maxEntries: number;
  readonly maxValueLength: number;
  readonly minValueLength?: number;
}

/** Environment-variable names: what `secrets` and `env` keys become inside the sandbox. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** An object of string → string whose keys are environment-variable names. */
export function IsStringRecord(rules: StringRecordRules, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStringRecord',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => explain(value, rules) === undefined,
        defaultMessage: (args) => `${args?.property} ${explain(args?.value, rules) ?? 'is invalid'}`,
      },
    });
}

function explain(value: unknown, rules: StringRecordRules): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object of string values';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > rules.maxEntries) return `must have at most ${rules.maxEntries} entries`;
  for (const [key, v] of entries) {
    if (!ENV_NAME.test(key))
      return `key "${cut(key)}" must be an environment variable name (letters, digits, _; not starting with a digit)`;
    if (typeof v !== 'string') return `value of "${key}" must be a string`;
    // Only why, never the value: it may be a secret.
    const fault = textFault(v);
    if (fault) return `value of "${key}" ${fault}`;
    if (v.length > rules.maxValueLength) return `value of "${key}" must be at most ${rules.maxValueLength} characters`;
    if (rules.minValueLength && v.length < rules.minValueLength) {
      return `value of "${key}" must be at least ${rules.minValueLength} characters (shorter values cannot be redacted reliably)`;
    }
  }
  return undefined;
}
