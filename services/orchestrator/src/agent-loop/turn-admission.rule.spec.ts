import type { TaskCommand, TaskEvent, TaskState, TurnQueueEntry } from '@app/task-domain';
import { decide, evolve, initialTaskState, outOfLine, projectTurnQueue, turnQueuePlace } from '@app/task-domain';
import { mayStartTurn } from './turn-admission.rule';

const policy = { turnsWaitForAdmission: true };

describe('turn admission (MAX_RUNNING_TASKS_PER_TENANT)', () => {
  it('admits a task while fewer than the limit hold an earlier place', () => {
    expect(mayStartTurn(5, [1, 5, 9], 2)).toBe(true);
    expect(mayStartTurn(5, [1, 3, 5], 2)).toBe(false);
    expect(mayStartTurn(1, [1, 3, 5], 1)).toBe(true);
    expect(mayStartTurn(3, [1, 3, 5], 1)).toBe(false);
  });

  it('places a task by the message whose turn runs or waits, and takes it out of line when nothing does', () => {
    const created: TaskEvent = {
      type: 'TaskCreated',
      data: {
        taskId: 't',
        tenantId: 'x',
        messageId: 'm1',
        text: 'a',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
      },
    };
    const steps: [TaskEvent, number][] = [
      [created, 10],
      [{ type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } }, 12],
      [{ type: 'UserMessageAdded', data: { messageId: 'm2', text: 'b', queued: true } }, 20],
      [{ type: 'TurnCompleted', data: { turn: 1 } }, 30],
    ];
    const places: (number | undefined)[] = [];
    let entry: TurnQueueEntry = outOfLine('t', 'x');
    for (const [event, position] of steps) {
      entry = projectTurnQueue(entry, event, position);
      places.push(turnQueuePlace(entry));
    }
    expect(places).toEqual([10, 10, 10, 20]);
    entry = projectTurnQueue(entry, { type: 'TurnStarted', data: { turn: 2, messageId: 'm2' } }, 40);
    expect(turnQueuePlace(entry)).toBe(20);
    entry = projectTurnQueue(entry, { type: 'TaskFailed', data: { turn: 2, error: 'x' } }, 41);
    expect(turnQueuePlace(entry)).toBeUndefined();
    entry = projectTurnQueue(entry, { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'c', queued: true } }, 50);
    entry = projectTurnQueue(entry, { type: 'TaskCancelled', data: { turn: 2, droppedMessageIds: ['m3'] } }, 51);
    expect(turnQueuePlace(entry)).toBeUndefined();
  });

  it("keeps an interrupted turn's place for the turn the interrupt starts (ifRunning interrupt): it holds the same running slot", () => {
    let entry: TurnQueueEntry = outOfLine('t', 'x');
    const steps: [TaskEvent, number][] = [
      [{ type: 'UserMessageAdded', data: { messageId: 'm1', text: 'a', queued: true } }, 10],
      [{ type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } }, 11],
      [{ type: 'UserMessageAdded', data: { messageId: 'm2', text: 'queued', queued: true } }, 20],
      [{ type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], reason: 'interrupted' } }, 30],
      [{ type: 'UserMessageAdded', data: { messageId: 'm3', text: 'instead', queued: false } }, 31],
      [{ type: 'TurnStarted', data: { turn: 2, messageId: 'm3' } }, 32],
    ];
    for (const [event, position] of steps) entry = projectTurnQueue(entry, event, position);
    expect(entry).toEqual({ taskId: 't', tenantId: 'x', running: 10, waiting: [{ messageId: 'm2', position: 20 }] });
  });

  // Several orchestrators decide at once, each from a read model that lags the store by a random
  // amount; appends are per task with optimistic concurrency (the decider sees the task's true
  // state). However the deliveries fall, no more than the limit run at once, and turns start in
  // the order they were asked for.
  it.each([1, 2, 3])("never runs more than %i of a tenant's turns at once, whatever the lag of each deciding process", (limit) => {
    let seed = 42 + limit;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const log: { taskId: string; event: TaskEvent }[] = [];
    const truth = new Map<string, TaskState>();
    const append = (taskId: string, command: TaskCommand): boolean => {
      let events: TaskEvent[];
      try {
        events = decide(command, truth.get(taskId) ?? initialTaskState(), policy);
      } catch {
        return false;
      }
      for (const event of events) {
        log.push({ taskId, event });
        truth.set(taskId, evolve(truth.get(taskId) ?? initialTaskState(), event));
      }
      return events.length > 0;
    };
    const lineAt = (length: number): Map<string, TurnQueueEntry> => {
      const line = new Map<string, TurnQueueEntry>();
      log
        .slice(0, length)
        .forEach(({ taskId, event }, i) => line.set(taskId, projectTurnQueue(line.get(taskId) ?? outOfLine(taskId, 'x'), event, i + 1)));
      return line;
    };
    const runningNow = () =>
      [...truth.values()].filter((s) => s.exists && (s.status === 'running' || s.status === 'awaiting_approval')).length;
    const startOrder: number[] = [];
    let tasks = 0;
    let maxRunning = 0;
    for (let tick = 0; tick < 600; tick++) {
      const r = random();
      if (r < 0.12) {
        const taskId = `t${tasks++}`;
        append(taskId, {
          type: 'CreateTask',
          data: {
            taskId,
            tenantId: 'x',
            messageId: `${taskId}-m1`,
            text: 'go',
            autoExecute: true,
            showInHistory: true,
            env: {},
            secretNames: [],
            files: [],
          },
        });
      } else if (r < 0.24 && tasks > 0) {
        const taskId = `t${Math.floor(random() * tasks)}`;
        append(taskId, { type: 'AddUserMessage', data: { messageId: `${taskId}-m${tick}`, text: 'more' } });
      } else if (r < 0.5) {
        const running = [...truth.entries()].filter(([, s]) => s.exists && s.status === 'running');
        if (running.length > 0) {
          const [taskId, s] = running[Math.floor(random() * running.length)];
          if (s.exists) append(taskId, { type: 'FailTurn', data: { turn: s.turn, error: 'done' } });
        }
      } else {
        // An orchestrator with a view some events behind looks at a task it was woken for: mostly
        // one near the head of the line, as the runner wakes them, sometimes any.
        const view = lineAt(Math.max(0, log.length - Math.floor(random() * 8)));
        const waiting = [...view.values()]
          .filter((e) => e.running === undefined && e.waiting.length > 0)
          .sort((a, b) => turnQueuePlace(a)! - turnQueuePlace(b)!);
        if (waiting.length === 0) continue;
        const candidate = waiting[Math.floor(random() * (random() < 0.8 ? Math.min(waiting.length, limit + 1) : waiting.length))];
        const places = [...view.values()].map(turnQueuePlace).filter((p): p is number => p !== undefined);
        const place = turnQueuePlace(candidate)!;
        const messageId = candidate.waiting[0].messageId;
        if (mayStartTurn(place, places, limit) && append(candidate.taskId, { type: 'StartTurn', data: { messageId } }))
          startOrder.push(place);
      }
      maxRunning = Math.max(maxRunning, runningNow());
      expect(runningNow()).toBeLessThanOrEqual(limit);
    }
    expect(maxRunning).toBe(limit); // the cap was reached, not merely never approached
    expect(startOrder.length).toBeGreaterThan(20);
    // FIFO: with one slot, turns start exactly in the order they were asked for.
    if (limit === 1) expect(startOrder).toEqual([...startOrder].sort((a, b) => a - b));
  });
});
