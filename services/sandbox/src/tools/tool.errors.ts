/** The model sent arguments that do not match the tool's schema. */
export class ToolArgumentError extends Error {
  readonly code = 'TOOL.INVALID_ARGUMENTS';
  constructor(message: string) {
    super(message);
    this.name = 'ToolArgumentError';
  }
}

/** An expected failure the model can act on (binary file, ambiguous edit, too large, …). */
export class ToolFailure extends Error {
  readonly code = 'TOOL.FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}
