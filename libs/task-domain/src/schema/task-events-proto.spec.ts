import * as protobuf from 'protobufjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskEventType } from '../task.events';
import { TASK_EVENT_SCHEMA_VERSIONS } from '../task.events';
import { APPROVAL_RULE_FIELDS, SEALED_SECRETS_FIELDS, TASK_EVENT_FIELDS } from './task-event-fields';

const PROTO = join(__dirname, '..', '..', '..', '..', 'proto', 'agent', 'v1', 'task_events.proto');

describe('task_events.proto matches the TypeScript event types', () => {
  // protobufjs ships google/protobuf/struct.proto among its common types.
  const root = new protobuf.Root().loadSync(PROTO, { keepCase: false });
  const types = Object.keys(TASK_EVENT_SCHEMA_VERSIONS) as TaskEventType[];

  it.each(types)('%s has a message with exactly its data fields', (type) => {
    const message = root.lookupType(`agent.v1.${type}`);
    expect(Object.keys(message.fields).sort()).toEqual([...TASK_EVENT_FIELDS[type]].sort());
  });

  it('has the approval rule with exactly its fields', () => {
    const message = root.lookupType('agent.v1.ApprovalRule');
    expect(Object.keys(message.fields).sort()).toEqual([...APPROVAL_RULE_FIELDS].sort());
  });

  it('has the sealed secrets with exactly their fields', () => {
    const message = root.lookupType('agent.v1.SealedSecrets');
    expect(Object.keys(message.fields).sort()).toEqual([...SEALED_SECRETS_FIELDS].sort());
  });

  it('carries every event type, and only those, in the envelope', () => {
    const envelope = root.lookupType('agent.v1.TaskEventEnvelope');
    const carried = envelope.oneofs.data.fieldsArray.map((f) => f.type);
    expect(carried.sort()).toEqual([...types].sort());
  });

  it('states each event schema version the code writes', () => {
    const text = readFileSync(PROTO, 'utf8');
    for (const type of types) {
      expect(text).toMatch(new RegExp(`// schema_version ${TASK_EVENT_SCHEMA_VERSIONS[type]}\\nmessage ${type} \\{`));
    }
  });

  it('encodes and decodes a sample of each scalar-only event without loss', () => {
    const samples: Array<[TaskEventType, Record<string, unknown>]> = [
      ['TurnStarted', { turn: 2, messageId: 'msg_1' }],
      ['ToolCallFinished', { callId: 'call_1', toolName: 'shell', status: 'error', output: 'boom', exitCode: 2, durationMs: 15 }],
      ['TaskCancelled', { turn: 3, droppedMessageIds: ['msg_2', 'msg_3'] }],
      [
        'ModelResponded',
        { turn: 1, step: 1, model: 'm', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } },
      ],
    ];
    for (const [type, data] of samples) {
      const message = root.lookupType(`agent.v1.${type}`);
      const decoded = message.toObject(message.decode(message.encode(message.fromObject(data)).finish()), { longs: Number });
      expect(decoded).toEqual(data);
    }
  });
});
