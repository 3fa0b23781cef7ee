/* eslint-disable no-control-regex -- these tests look for raw control characters in the output */
import type { TaskStreamEvent } from '@agentic-task-service/client';
import { EventPrinter } from '../src/event-printer';
import { Terminal } from '../src/terminal';

/** A printer on a Terminal without colours that writes into a string. */
function printer() {
  let out = '';
  const stream = { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WriteStream;
  const eventPrinter = new EventPrinter(new Terminal(false, stream, stream), 'task_1');
  return { print: (events: TaskStreamEvent[]) => events.forEach((event) => eventPrinter.print(event)), out: () => out };
}

describe('EventPrinter', () => {
  it('prints a turn: the call on one line, its result with the first lines of output, text, then usage and artifacts', () => {
    const p = printer();
    const events: TaskStreamEvent[] = [
      { id: 1, type: 'message', data: { messageId: 'msg_1', text: 'count lines', queued: false } },
      { id: 2, type: 'tool_call', data: { callId: 'call_1', toolName: 'shell', status: 'approved', args: { command: 'wc -l data.csv' } } },
      {
        id: 3,
        type: 'tool_result',
        data: { callId: 'call_1', toolName: 'shell', status: 'success', output: '1\n2\n3\n4\n', exitCode: 0, durationMs: 12 },
      },
      {
        id: 4,
        type: 'usage',
        data: {
          inputTokens: 100,
          outputTokens: 20,
          totalTokens: 120,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          costUsd: 0.0012,
          turn: 1,
          step: 1,
          model: 'm',
        },
      },
      { id: 5, type: 'content', data: { text: 'There are ' } },
      { id: 6, type: 'content', data: { text: '4 lines.' } },
      {
        id: 7,
        type: 'artifact',
        data: {
          path: 'downloads/n.txt',
          name: 'n.txt',
          size: 2048,
          sha256: 'x',
          category: 'text',
          mimeType: 'text/plain',
          modifiedAt: '',
          callId: 'call_1',
          status: 'recorded',
        },
      },
      { id: 8, type: 'done', data: { status: 'completed', turn: 1 } },
    ];
    p.print(events);
    expect(p.out()).toBe(
      [
        '› count lines',
        '● shell wc -l data.csv',
        '  ✓ success exit 0 12 ms',
        '    1',
        '    2',
        '    3',
        '    … 1 more lines',
        'There are 4 lines.',
        '  ↳ wrote downloads/n.txt (2.0 KiB)',
        '✔ completed',
        'usage: 120 tokens (100 in, 20 out), $0.0012',
        'artifacts:',
        '  downloads/n.txt (2.0 KiB)',
        '  ats download task_1 -o <dir>',
        '',
      ].join('\n'),
    );
  });

  it("prints the turn's usage as done records it, and says when its cost is unknown (a call without a price)", () => {
    const p = printer();
    const usage = { inputTokens: 1_000, outputTokens: 200, totalTokens: 1_200, cacheReadTokens: 0, cacheWriteTokens: 0 };
    p.print([
      { id: 1, type: 'done', data: { status: 'completed', turn: 1, usage: { ...usage, costUsd: null } } },
      { id: 2, type: 'done', data: { status: 'failed', error: 'Cost budget reached', turn: 2, usage: { ...usage, costUsd: 0.00421 } } },
    ]);
    expect(p.out()).toBe(
      [
        '✔ completed',
        'usage: 1,200 tokens (1,000 in, 200 out), cost unknown (no price)',
        '✖ failed: Cost budget reached',
        'usage: 1,200 tokens (1,000 in, 200 out), $0.0042',
        '',
      ].join('\n'),
    );
  });

  it("prints each connection of a call's command under the call, before its result: bytes and time, or why it was refused", () => {
    const p = printer();
    p.print([
      { id: 1, type: 'tool_call', data: { callId: 'call_1', toolName: 'shell', status: 'approved', args: { command: 'pip download x' } } },
      { id: 2, type: 'tool_started', data: { callId: 'call_1', toolName: 'shell' } },
      {
        id: 3,
        type: 'egress',
        data: { callId: 'call_1', host: 'pypi.org', port: 443, allowed: true, bytesOut: 12_595, bytesIn: 1_258_291, durationMs: 340 },
      },
      {
        id: 4,
        type: 'egress',
        data: {
          callId: 'call_1',
          host: 'evil.example',
          port: 443,
          allowed: false,
          reason: "refused: not in the task's network.allow",
          bytesOut: 0,
          bytesIn: 0,
          durationMs: 1,
        },
      },
      {
        id: 5,
        type: 'tool_result',
        data: { callId: 'call_1', toolName: 'shell', status: 'success', output: '', exitCode: 0, durationMs: 900 },
      },
    ]);
    expect(p.out()).toBe(
      [
        '● shell pip download x',
        '  ↗ pypi.org:443 12.3 KiB out / 1.2 MiB in, 340 ms',
        "  ↗ evil.example:443 refused: not in the task's network.allow",
        '  ✓ success exit 0 900 ms',
        '',
      ].join('\n'),
    );
  });

  it('keeps a connection on one line whatever its host, port and reason hold', () => {
    const p = printer();
    const forged = 'x\n  ✓ success exit 0 1 ms\n\u001b[2J';
    p.print([
      {
        id: 1,
        type: 'egress',
        data: {
          callId: 'c',
          host: forged,
          port: forged as unknown as number,
          allowed: false,
          reason: forged,
          bytesOut: 0,
          bytesIn: 0,
          durationMs: 0,
        },
      },
    ]);
    expect(p.out().split('\n')).toEqual([expect.stringMatching(/^ {2}↗ x\\n {2}✓ success/), '']);
    expect(p.out()).not.toContain('\u001b');
  });

  it('lets no control character of a hostile event through, in strings or in fields that should be numbers', () => {
    const p = printer();
    const evil = '\u001b]0;pwned\u0007\u001b[2J\u009b1m\u202e';
    p.print([
      { id: 1, type: 'tool_call', data: { callId: evil, toolName: evil, status: 'approved', args: { [evil]: evil } } },
      {
        id: 2,
        type: 'tool_result',
        data: {
          callId: evil,
          toolName: evil,
          status: evil as 'success',
          output: evil,
          exitCode: evil as unknown as number,
          durationMs: evil as unknown as number,
        },
      },
      { id: 3, type: 'artifact', data: { path: evil, callId: evil, status: 'removed' } },
      { id: 4, type: 'notice', data: { code: 'SECRETS_UNAVAILABLE', names: [evil], message: evil } },
      { id: 5, type: 'done', data: { status: evil as 'failed', error: evil, turn: 1 } },
    ]);
    expect(p.out()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(p.out()).toContain('\\x1b]0;pwned\\x07');
  });
});
