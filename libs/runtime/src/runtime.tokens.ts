/** The environment the process was configured from (tests pass their own). */
export const RUNTIME_ENV = Symbol('RUNTIME_ENV');
