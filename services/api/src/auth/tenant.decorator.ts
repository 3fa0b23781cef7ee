import type { ExecutionContext } from '@nestjs/common';
import { createParamDecorator } from '@nestjs/common';
import type { AuthenticatedRequest } from './api-key.guard';

/** The tenant the request's API key acts for (set by ApiKeyGuard). */
export const Tenant = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): string => ctx.switchToHttp().getRequest<AuthenticatedRequest>().tenantId,
);
