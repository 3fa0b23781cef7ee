import { applyDecorators } from '@nestjs/common';
import { IsNumber, IsOptional, IsPositive, Max } from 'class-validator';

/** `maxCostUsd` on create and follow-up: optional, a positive number of USD. */
export const IsCostBudget = (): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'maxCostUsd must be a number of USD' }),
    IsPositive({ message: 'maxCostUsd must be a positive number of USD' }),
    Max(1e9, { message: 'maxCostUsd must be at most 1000000000' }),
  );
