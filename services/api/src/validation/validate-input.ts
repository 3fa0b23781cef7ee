import { ValidationError as ClassValidatorError, validate } from 'class-validator';
import { ClassConstructor, plainToInstance } from 'class-transformer';
import { ValidationError } from '@app/common';
import { cut } from './text-fault';

/** Validates a plain object against a DTO class; the error message names every bad field. */
export async function validateInput<T extends object>(type: ClassConstructor<T>, plain: unknown): Promise<T> {
  if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) throw new ValidationError('request body must be a JSON object, sent as Content-Type: application/json');
  const instance = plainToInstance(type, plain);
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ValidationError(describeErrors(errors));
  return instance;
}

export function describeErrors(errors: ClassValidatorError[], parent = ''): string {
  return errors
    .flatMap((e) => {
      const field = parent ? `${parent}.${e.property}` : e.property;
      // Cut: class-validator quotes a hostile field name whole ("property <1 MB> should not exist").
      const own = Object.values(e.constraints ?? {}).map((m) => cut(m.startsWith(e.property) ? `${field}${m.slice(e.property.length)}` : `${field}: ${m}`, 500));
      return [...own, ...(e.children?.length ? [describeErrors(e.children, field)] : [])];
    })
    .join('; ');
}
