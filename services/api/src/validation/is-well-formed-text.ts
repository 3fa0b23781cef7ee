import type { ValidationOptions } from 'class-validator';
import { registerDecorator } from 'class-validator';
import { findTextFault } from './text-fault';

/**
 * Free text that can be stored and passed on: no NUL and no lone surrogate in the string, or in
 * any key or string of an object or array. Other types pass (their own validators judge them).
 */
export function IsWellFormedText(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isWellFormedText',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => findTextFault(value, '') === undefined,
        defaultMessage: (args) => findTextFault(args?.value, args?.property ?? '') ?? `${args?.property} is not well-formed text`,
      },
    });
}
