// Bus subjects, declared once: dotted nouns, then the verb. Request/reply subjects are commands
// one instance answers; `*.event.*` subjects are facts every subscriber hears.
export const SUBJECTS = {
  sandboxExecuteTool: 'sandbox.command.execute_tool',
  sandboxPrepareWorkspace: 'sandbox.command.prepare_workspace',
  sandboxListTools: 'sandbox.query.list_tools',
  /** One sandbox instance's own subjects: a request forwarded to the instance holding the task's sandbox. */
  sandboxInstanceExecuteTool: (instanceId: string) => `sandbox.instance.${instanceId}.execute_tool`,
  sandboxInstancePrepareWorkspace: (instanceId: string) => `sandbox.instance.${instanceId}.prepare_workspace`,
  /** The task was cancelled while this call ran: whichever instance runs it kills it. */
  sandboxToolCancelled: 'sandbox.event.tool_cancelled',
  artifactsList: 'artifacts.query.list',
  artifactsLocate: 'artifacts.query.locate',
  taskEventsAppended: 'task.event.appended',
} as const;
