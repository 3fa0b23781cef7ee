import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { AppError } from '@app/common';
import { FastifyRequest } from 'fastify';
import { ApiKeyRegistry } from './api-key-registry';

export interface AuthenticatedRequest extends FastifyRequest {
  tenantId: string;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** `Authorization: Bearer <key>` on every /api/v1 route; the key decides the tenant. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly keys: ApiKeyRegistry) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match) throw new AppError('AUTH_REQUIRED', 'Authorization header with a Bearer API key is required');
    const tenantId = this.keys.tenantOf(match[1]);
    if (!tenantId) throw new AppError('INVALID_API_KEY', 'The API key is invalid or expired');
    request.tenantId = tenantId;
    return true;
  }
}
