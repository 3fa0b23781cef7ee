import { isTaskId, newId, taskIdOf, taskStreamId } from './ids';

describe('ids', () => {
  it('accepts every task id newId makes', () => {
    for (let i = 0; i < 20; i++) expect(isTaskId(newId('task'))).toBe(true);
  });

  const hex = (n: number, digit = 'a') => digit.repeat(n);
  it.each(['', 'task_', `msg_${hex(32)}`, `task_${hex(32, 'A')}`, `task_${hex(31)}`, `task_${hex(33)}`, `task_${hex(32)}/..`, '../task'])(
    'refuses %j as a task id',
    (id) => expect(isTaskId(id)).toBe(false),
  );

  it('reads the task id back from its stream id', () => {
    const taskId = newId('task');
    expect(taskStreamId(taskId)).toBe(`task-${taskId}`);
    expect(taskIdOf(taskStreamId(taskId))).toBe(taskId);
  });

  it('finds no task in a stream that is not a task stream', () => {
    expect(taskIdOf('sandbox-placements')).toBeUndefined();
    expect(taskIdOf('Task-x')).toBeUndefined();
  });
});
