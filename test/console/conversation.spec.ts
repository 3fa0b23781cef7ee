import type { TaskStreamEvent } from '@agentic-task-service/client';
import { parseCsv } from '../../services/api/console/src/model/csv';
import { EMPTY_CONVERSATION, foldEvent, isPending } from '../../services/api/console/src/model/conversation';
import { egressSummary, egressText } from '../../services/api/console/src/model/egress';
import { formatBytes } from '../../services/api/console/src/model/units';

// The console's task view is a fold of the event stream: these pin down that a replay overlapping
// what was shown changes nothing, and how each kind lands.

const events: TaskStreamEvent[] = [
  { id: 1, type: 'message', data: { messageId: 'msg_1', text: 'hi', queued: true } },
  { id: 2, type: 'status', data: { status: 'running', turn: 1, messageId: 'msg_1' } },
  { id: 3, type: 'content', data: { text: 'Let me ' } },
  { id: 4, type: 'content', data: { text: 'look.' } },
  {
    id: 5,
    type: 'usage',
    data: {
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.0005,
      turn: 1,
      step: 1,
      model: 'm',
    },
  },
  { id: 6, type: 'tool_call', data: { callId: 'c1', toolName: 'shell', status: 'awaiting_approval', args: { command: 'ls' } } },
  { id: 7, type: 'tool_decision', data: { callId: 'c1', outcome: 'proceed_once', approved: true } },
  { id: 8, type: 'tool_started', data: { callId: 'c1', toolName: 'shell' } },
  { id: 9, type: 'tool_result', data: { callId: 'c1', toolName: 'shell', status: 'success', output: 'a\nb', exitCode: 0, durationMs: 12 } },
  {
    id: 10,
    type: 'artifact',
    data: {
      path: 'downloads/r.md',
      name: 'r.md',
      size: 3,
      sha256: 'x',
      category: 'markdown',
      mimeType: 'text/markdown',
      modifiedAt: '',
      callId: 'c1',
      status: 'recorded',
    },
  },
  { id: 11, type: 'content', data: { text: 'Done.' } },
  { id: 12, type: 'done', data: { status: 'completed', turn: 1 } },
];

const fold = (list: TaskStreamEvent[], from = EMPTY_CONVERSATION) => list.reduce(foldEvent, from);

describe('console conversation fold', () => {
  it('joins streamed text, follows a tool call to its result, sums usage, records artifacts', () => {
    const view = fold(events);
    expect(view.lastEventId).toBe(12);
    expect(view.items.map((item) => item.kind)).toEqual(['user', 'turn', 'text', 'tool', 'text', 'done']);
    expect(view.items[2]).toMatchObject({ kind: 'text', text: 'Let me look.' });
    expect(view.items[3]).toMatchObject({ kind: 'tool', started: true, decision: { outcome: 'proceed_once' }, result: { exitCode: 0 } });
    expect(view.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.0005 });
    expect([...view.artifacts.keys()]).toEqual(['downloads/r.md']);
  });

  it('ignores events it has already folded: a reconnect that replays from an earlier id duplicates nothing', () => {
    const once = fold(events);
    const midway = fold(events.slice(0, 7));
    expect(fold(events.slice(3), midway)).toEqual(once);
    expect(fold(events, once)).toBe(once);
  });

  it('counts a call as pending until it is decided or has a result', () => {
    const waiting = fold(events.slice(0, 6));
    expect(waiting.items.filter(isPending).map((item) => item.kind === 'tool' && item.callId)).toEqual(['c1']);
    expect(fold(events.slice(0, 7)).items.filter(isPending)).toEqual([]);
  });

  it('keeps the id of a call’s result (the step to list files at or fork after) and shows where a fork came from', () => {
    const view = fold([{ id: 1, type: 'forked', data: { taskId: 'task_src', eventId: 9 } }, ...events.slice(1)]);
    expect(view.items[0]).toEqual({ kind: 'forked', eventId: 1, from: { taskId: 'task_src', eventId: 9 } });
    expect(view.items.find((item) => item.kind === 'tool')).toMatchObject({ eventId: 6, resultEventId: 9 });
    expect(fold(events.slice(0, 8)).items.find((item) => item.kind === 'tool')).not.toHaveProperty('resultEventId');
  });

  it('says what became of an idle workspace: expired, restored, or kept up after its snapshot failed', () => {
    const view = fold([
      { id: 1, type: 'sandbox', data: { status: 'expired', sizeBytes: 10, idleMs: 900000 } },
      { id: 2, type: 'sandbox', data: { status: 'restored', durationMs: 40 } },
      { id: 3, type: 'sandbox', data: { status: 'snapshot_failed', reason: 'snapshot exceeds 10 bytes', attempts: 4, kept: 'workspace' } },
    ]);
    expect(view.items.map((item) => item.kind === 'notice' && item.text)).toEqual([
      'The workspace expired while idle (kept, restored on the next turn).',
      'The workspace was restored.',
      'The idle workspace could not be archived (4 attempts: snapshot exceeds 10 bytes); it stays up as it is.',
    ]);
  });
});

describe('console egress', () => {
  const through = {
    callId: 'c1',
    host: 'pypi.org',
    port: 443,
    allowed: true as const,
    bytesOut: 12_345,
    bytesIn: 1_234_567,
    durationMs: 340,
  };
  const refused = {
    callId: 'c1',
    host: 'evil.example',
    port: 443,
    allowed: false as const,
    reason: "refused: not in the task's network.allow",
    bytesOut: 0,
    bytesIn: 0,
    durationMs: 2,
  };

  it("attaches each connection to its tool call, in order, before the call's result; a replayed one is not added twice", () => {
    const call: TaskStreamEvent[] = [
      { id: 1, type: 'tool_call', data: { callId: 'c1', toolName: 'shell', status: 'approved', args: { command: 'pip download x' } } },
      { id: 2, type: 'tool_started', data: { callId: 'c1', toolName: 'shell' } },
      { id: 3, type: 'egress', data: through },
      { id: 4, type: 'egress', data: refused },
      {
        id: 5,
        type: 'tool_result',
        data: { callId: 'c1', toolName: 'shell', status: 'success', output: '', exitCode: 0, durationMs: 900 },
      },
    ];
    const view = fold(call);
    expect(view.items).toHaveLength(1);
    expect(view.items[0]).toMatchObject({ kind: 'tool', egress: [through, refused], result: { status: 'success' } });
    expect(fold(call, fold(call.slice(0, 4)))).toEqual(view);
    // A connection of a call the page does not show (its tool_call before what was read) changes no card.
    expect(fold([{ id: 9, type: 'egress', data: { ...through, callId: 'other' } }], view).items).toEqual(view.items);
  });

  it('says where a connection went and what it carried, or why it was refused', () => {
    expect(egressText(through)).toBe('↗ pypi.org:443 — 12.3 kB out / 1.2 MB in, 340 ms');
    expect(egressText(refused)).toBe("↗ evil.example:443 — refused: not in the task's network.allow");
    expect(egressSummary([through])).toBe('1 connection');
    expect(egressSummary([through, refused, refused])).toBe('3 connections, 2 refused');
    expect([0, 999, 1000, 999_499, 1_500_000, 2_000_000_000].map(formatBytes)).toEqual([
      '0 B',
      '999 B',
      '1.0 kB',
      '999.5 kB',
      '1.5 MB',
      '2.0 GB',
    ]);
  });
});

describe('console CSV preview', () => {
  it('reads quoted fields with commas, quotes and newlines', () => {
    expect(parseCsv('a,b\r\n"x, y","say ""hi"""\n"multi\nline",2\n')).toEqual([
      ['a', 'b'],
      ['x, y', 'say "hi"'],
      ['multi\nline', '2'],
    ]);
  });
});
