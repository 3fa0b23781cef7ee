import { applyDecorators } from '@nestjs/common';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** `maxTokens` on create and follow-up: optional, a whole number of tokens, at least 1. */
export const IsTokenBudget = (): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    IsInt({ message: 'maxTokens must be a whole number of tokens' }),
    Min(1, { message: 'maxTokens must be at least 1' }),
    Max(Number.MAX_SAFE_INTEGER, { message: `maxTokens must be at most ${Number.MAX_SAFE_INTEGER}` }),
  );
