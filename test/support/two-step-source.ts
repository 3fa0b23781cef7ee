import type { TaskEventRecord } from '@agentic-task-service/client';
import type { Harness } from './service-harness';

/**
 * A finished task of two shell steps, the time-travel suites' source: the first writes
 * first.txt ("one"), the second rewrites it ("changed") and adds second.txt ("two").
 */
export async function twoStepSource(h: Harness): Promise<{ source: string; results: TaskEventRecord[]; doneId: number }> {
  const ats = h.client();
  h.model.script(
    { toolCalls: [{ name: 'shell', arguments: { command: 'printf one > first.txt' } }] },
    { toolCalls: [{ name: 'shell', arguments: { command: 'printf changed > first.txt && printf two > second.txt' } }] },
    { text: 'Both written.' },
  );
  const source = (await ats.tasks.create({ message: 'Write two files' })).id;
  for await (const event of ats.tasks.stream(source)) void event;
  const history: TaskEventRecord[] = [];
  for await (const record of ats.tasks.history(source)) history.push(record);
  const results = history.filter((record) => record.type === 'tool_result');
  const doneId = history.filter((record) => record.type === 'done').at(-1)!.id;
  return { source, results, doneId };
}
