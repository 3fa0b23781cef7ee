import { toPublicEvent } from './public-event.projection';

describe('public event projection: usage', () => {
  const turnUsage = { inputTokens: 120, outputTokens: 8, totalTokens: 128, cacheReadTokens: 100, cacheWriteTokens: 0, costUsd: 0.00042 };

  it.each([
    [
      { type: 'TurnCompleted' as const, data: { turn: 2, usage: turnUsage } },
      { status: 'completed', turn: 2, usage: turnUsage },
    ],
    [
      { type: 'TaskFailed' as const, data: { turn: 2, error: 'boom', usage: turnUsage } },
      { status: 'failed', error: 'boom', turn: 2, usage: turnUsage },
    ],
    [
      { type: 'TaskCancelled' as const, data: { turn: 2, droppedMessageIds: [], usage: turnUsage } },
      { status: 'cancelled', turn: 2, usage: turnUsage },
    ],
  ])("puts the turn's usage on done (%j)", (event, data) => {
    expect(toPublicEvent(event)).toEqual({ kind: 'done', data });
  });

  it('gives a done whose turn usage was recorded before cost was counted a null costUsd', () => {
    const { costUsd: _none, ...before } = turnUsage;
    expect(toPublicEvent({ type: 'TurnCompleted', data: { turn: 2, usage: before } })).toEqual({
      kind: 'done',
      data: { status: 'completed', turn: 2, usage: { ...before, costUsd: null } },
    });
  });

  it('leaves usage off a done whose event was recorded without it', () => {
    expect(toPublicEvent({ type: 'TurnCompleted', data: { turn: 1 } })).toEqual({ kind: 'done', data: { status: 'completed', turn: 1 } });
  });

  it('gives a usage event zero cache counts when the model call recorded none', () => {
    const event = {
      type: 'ModelResponded' as const,
      data: { turn: 1, step: 1, model: 'm', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } },
    };
    expect(toPublicEvent(event)).toEqual({
      kind: 'usage',
      data: {
        inputTokens: 3,
        outputTokens: 4,
        totalTokens: 7,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: null,
        turn: 1,
        step: 1,
        model: 'm',
      },
    });
  });
});
