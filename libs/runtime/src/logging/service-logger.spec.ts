import { Logger } from '@nestjs/common';
import { TraceFlags, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Writable } from 'node:stream';
import { annotateLogContext, runWithLogContext } from '@app/common';
import type { LogFormat } from './log-format';
import { ServiceLogger } from './service-logger';

/** A logger writing into memory; `lines()` waits a tick for the pretty stream, which pipes. */
function capture(format: LogFormat = 'json', level: 'log' | 'debug' = 'log') {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  const logger = new ServiceLogger({ service: 'test-service', env: {}, format, level, destination });
  const lines = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return text.split('\n').filter((line) => line.length > 0);
  };
  return { logger, lines, text: async () => (await lines()).join('\n') };
}

const json = async (lines: () => Promise<string[]>) => (await lines()).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('ServiceLogger', () => {
  it('writes one JSON object per line with level, time, service, context and msg', async () => {
    const { logger, lines } = capture();
    logger.log('listening on 3000', 'Api');
    logger.warn('careful');
    const [first, second] = await json(lines);
    expect(first).toMatchObject({ level: 'info', service: 'test-service', context: 'Api', msg: 'listening on 3000' });
    expect(new Date(first.time as string).toISOString()).toBe(first.time);
    expect(second).toMatchObject({ level: 'warn', msg: 'careful' });
    expect(second).not.toHaveProperty('context');
  });

  it('leaves out the levels below the one set', async () => {
    const { logger, lines } = capture('json', 'log');
    logger.debug('hidden', 'X');
    logger.verbose('hidden too', 'X');
    logger.error('shown', undefined, 'X');
    expect((await json(lines)).map((l) => l.msg)).toEqual(['shown']);
  });

  it('carries taskId, turn, callId and requestId inside a log context, and nothing of it outside', async () => {
    const { logger, lines } = capture();
    await runWithLogContext({ requestId: 'req-1', taskId: 'task_a' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      annotateLogContext({ turn: 2, callId: 'call_x' });
      logger.log('inside', 'AgentStep');
    });
    logger.log('outside', 'AgentStep');
    const [inside, outside] = await json(lines);
    expect(inside).toMatchObject({ msg: 'inside', requestId: 'req-1', taskId: 'task_a', turn: 2, callId: 'call_x' });
    expect(Object.keys(outside)).not.toEqual(expect.arrayContaining(['taskId']));
    expect(outside).not.toHaveProperty('requestId');
  });

  it('carries the trace id of the active OpenTelemetry span, once tracing is set up', async () => {
    const { logger, lines } = capture();
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const span = trace.wrapSpanContext({ traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
      await context.with(trace.setSpan(context.active(), span), async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        logger.log('in a span', 'Api');
      });
      logger.log('in none', 'Api');
      const [inSpan, inNone] = await json(lines);
      expect(inSpan).toMatchObject({ msg: 'in a span', traceId });
      expect(inNone).not.toHaveProperty('traceId');
    } finally {
      context.disable();
    }
  });

  it("redacts the task's secrets from the message and the stack inside its context only", async () => {
    const { logger, lines } = capture();
    logger.redactTaskSecretsWith((taskId, text) => (taskId === 'task_a' ? text.split('s3cr3t-value').join('[REDACTED:TOKEN]') : text));
    runWithLogContext({ taskId: 'task_a' }, () => {
      logger.error('failed with s3cr3t-value', 'Error: s3cr3t-value\n    at run (x.js:1:2)', 'Sandbox');
      logger.log({ msg: 'structured s3cr3t-value', detail: 'also s3cr3t-value' }, 'Http');
    });
    runWithLogContext({ taskId: 'task_b' }, () => logger.log('other task: s3cr3t-value', 'Sandbox'));
    const [error, structured, other] = await json(lines);
    expect(error.msg).toBe('failed with [REDACTED:TOKEN]');
    expect((error.err as { stack: string }).stack).toBe('Error: [REDACTED:TOKEN]\n    at run (x.js:1:2)');
    expect(structured).toMatchObject({ msg: 'structured [REDACTED:TOKEN]', detail: 'also [REDACTED:TOKEN]', context: 'Http' });
    expect(other.msg).toBe('other task: s3cr3t-value');
  });

  it('censors credentials in headers and secrets of any object logged', async () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'request', headers: { authorization: 'Bearer key-123', accept: '*/*' }, body: { secrets: { T: 'v' } } });
    const [line] = await json(lines);
    expect(line.headers).toEqual({ authorization: '[REDACTED]', accept: '*/*' });
    expect(line.body).toEqual({ secrets: '[REDACTED]' });
  });

  it("keeps an error's stack: from an Error logged, and from Nest's (message, stack, context)", async () => {
    const { logger, lines } = capture();
    const error = new Error('boom');
    logger.error(error, 'Runner');
    logger.error('handler failed', error.stack, 'ExceptionsHandler');
    logger.error('no context', error.stack);
    logger.warn({ msg: 'activity failed', error, attempt: 2 }, 'Temporal');
    const [fromError, fromNest, withoutContext, inFields] = await json(lines);
    expect(fromError).toMatchObject({ msg: 'boom', context: 'Runner', err: { type: 'Error', message: 'boom' } });
    expect((fromError.err as { stack: string }).stack).toMatch(/^Error: boom\n\s+at /);
    expect(fromNest).toMatchObject({ msg: 'handler failed', context: 'ExceptionsHandler', err: { stack: error.stack } });
    expect(withoutContext).toMatchObject({ msg: 'no context', err: { stack: error.stack } });
    expect(withoutContext).not.toHaveProperty('context');
    expect(inFields).toMatchObject({ msg: 'activity failed', attempt: 2, error: { type: 'Error', message: 'boom', stack: error.stack } });
  });

  it("is what Nest's Logger writes through once installed", async () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(logger);
    try {
      new Logger('Orchestrator').log('started');
      new Logger('Orchestrator').error('failed');
    } finally {
      Logger.overrideLogger(false);
    }
    const [log, error] = await json(lines);
    expect(log).toMatchObject({ level: 'info', context: 'Orchestrator', msg: 'started' });
    expect(error).toMatchObject({ level: 'error', context: 'Orchestrator', msg: 'failed' });
    expect(error).not.toHaveProperty('err');
  });

  it('writes readable text, not JSON, with LOG_FORMAT=pretty', async () => {
    const { logger, text } = capture('pretty');
    runWithLogContext({ taskId: 'task_a', turn: 1 }, () => logger.warn('sandbox is slow', 'Sandbox'));
    logger.error('boom', 'Error: boom\n    at run (x.js:1:2)', 'Runner');
    const out = await text();
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: \[Sandbox\] sandbox is slow \(task=task_a turn=1\)$/m);
    expect(out).toMatch(/ERROR: \[Runner\] boom\nError: boom\n {4}at run \(x\.js:1:2\)/);
    expect(() => JSON.parse(out.split('\n')[0])).toThrow();
  });
});
