import type { ValidationError as ClassValidatorError } from 'class-validator';
import { validate } from 'class-validator';
import type { ClassConstructor } from 'class-transformer';
import { plainToInstance } from 'class-transformer';
import { ValidationError } from '@app/common';
import { cut } from './text-fault';

/**
 * Validates a plain object against a DTO class; the error message names every bad field.
 *
 * Only top-level values go through class-transformer (the DTOs' @Transform decorators sit
 * there): for a nested object it takes the object's own `constructor` key for its class, so a
 * body such as {"env":{"constructor":"x"}} (a valid variable name) threw a TypeError, a 500.
 * Nested objects and arrays are set as parsed and checked by class-validator as before. A
 * top-level `constructor` or `__proto__`, which class-transformer drops without a word, is
 * refused like any unknown field, and so is a `__proto__` key at any depth (it dropped those
 * too; a JSON body with one is already refused by the parser, multipart JSON text was not).
 */
export async function validateInput<T extends object>(type: ClassConstructor<T>, plain: unknown): Promise<T> {
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain))
    throw new ValidationError('request body must be a JSON object, sent as Content-Type: application/json');
  for (const key of ['constructor', '__proto__'])
    if (Object.hasOwn(plain, key)) throw new ValidationError(`property ${key} should not exist`);
  const poisoned = protoKeyPath(plain);
  if (poisoned) throw new ValidationError(`${poisoned}: a key "__proto__" is not allowed`);
  const entries = Object.entries(plain);
  const nested = (value: unknown) => value !== null && typeof value === 'object';
  const instance = plainToInstance(type, Object.fromEntries(entries.filter(([, value]) => !nested(value))));
  for (const [key, value] of entries)
    if (nested(value)) Object.defineProperty(instance, key, { value, enumerable: true, writable: true, configurable: true });
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ValidationError(describeErrors(errors));
  return instance;
}

/** Where an own `__proto__` key sits inside `value` (e.g. `env`), walked without recursion; undefined if nowhere. */
function protoKeyPath(value: object): string | undefined {
  const stack: [object, string][] = [];
  const pushObjects = (of: object, path?: string) => {
    for (const [key, inner] of Object.entries(of))
      if (inner !== null && typeof inner === 'object') stack.push([inner, path === undefined ? cut(key) : `${path}.${cut(key)}`]);
  };
  pushObjects(value);
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (Object.hasOwn(item, '__proto__')) return path;
    pushObjects(item, path);
  }
  return undefined;
}

export function describeErrors(errors: ClassValidatorError[], parent = ''): string {
  return errors
    .flatMap((e) => {
      const field = parent ? `${parent}.${e.property}` : e.property;
      // Cut: class-validator quotes a hostile field name whole ("property <1 MB> should not exist").
      const own = Object.values(e.constraints ?? {}).map((m) =>
        cut(m.startsWith(e.property) ? `${field}${m.slice(e.property.length)}` : `${field}: ${m}`, 500),
      );
      return [...own, ...(e.children?.length ? [describeErrors(e.children, field)] : [])];
    })
    .join('; ');
}
