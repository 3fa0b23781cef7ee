import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { AppError, ErrorCode, HTTP_STATUS_BY_CODE } from '@app/common';
import { RemoteError } from '@app/bus';
import { ExpectedRevisionConflictError } from '@app/event-store';
import { FastifyReply } from 'fastify';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'AUTH_REQUIRED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'VALIDATION_ERROR',
  429: 'RATE_LIMITED',
};

/** The one place where errors become HTTP: `{success:false, error:{code, message}}`. */
@Catch()
export class AppExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, code, message } = this.describe(exception);
    if (reply.sent || reply.raw.headersSent) return;
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send({ success: false, error: { code, message } });
  }

  private describe(exception: unknown): { status: number; code: ErrorCode; message: string } {
    if (exception instanceof ExpectedRevisionConflictError) {
      return { status: 409, code: 'CONFLICT', message: 'The task changed concurrently; retry the request' };
    }
    if (exception instanceof AppError) return { status: HTTP_STATUS_BY_CODE[exception.code], code: exception.code, message: exception.message };
    if (exception instanceof RemoteError && exception.remoteCode in HTTP_STATUS_BY_CODE && exception.remoteCode !== 'INTERNAL') {
      const code = exception.remoteCode as ErrorCode;
      return { status: HTTP_STATUS_BY_CODE[code], code, message: exception.message };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = CODE_BY_STATUS[status];
      if (code) return { status: HTTP_STATUS_BY_CODE[code], code, message: exception.message };
    }
    const fastifyStatus = (exception as { statusCode?: number }).statusCode;
    if (fastifyStatus && CODE_BY_STATUS[fastifyStatus]) {
      const code = CODE_BY_STATUS[fastifyStatus];
      return { status: HTTP_STATUS_BY_CODE[code], code, message: (exception as Error).message };
    }
    // Never echo an unexpected error: it may carry internals. Log it, answer generically.
    this.logger.error(exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception));
    return { status: 500, code: 'INTERNAL', message: 'Internal error' };
  }
}
