import { registerDecorator } from 'class-validator';

/**
 * Text with something in it besides whitespace: the rule the task decider applies to a
 * follow-up's message, checked here for the create too, before its uploads are handed over.
 * Other types pass (their own validators judge them).
 */
export function IsNotBlank(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isNotBlank',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || value.trim() !== '',
        defaultMessage: (args) => `${args?.property} must be a non-empty string`,
      },
    });
}
