// Bus subjects, declared once: dotted nouns, then the verb. Request/reply subjects are commands
// one instance answers; `*.event.*` subjects are facts every subscriber hears.
export const SUBJECTS = {
  sandboxExecuteTool: 'sandbox.command.execute_tool',
  sandboxPrepareWorkspace: 'sandbox.command.prepare_workspace',
  sandboxListTools: 'sandbox.query.list_tools',
  /** The task was cancelled while this call ran: whichever instance runs it kills it. */
  sandboxToolCancelled: 'sandbox.event.tool_cancelled',
  artifactsList: 'artifacts.query.list',
  artifactsLocate: 'artifacts.query.locate',
  taskEventsAppended: 'task.event.appended',
} as const;
