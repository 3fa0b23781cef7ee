/** The success envelope of SPEC.md: `{success: true, data}`. */
export const ok = <T>(data: T): { success: true; data: T } => ({ success: true, data });
