/** The success envelope of docs/api.md "Requests and responses": `{success: true, data}`. */
export const ok = <T>(data: T): { success: true; data: T } => ({ success: true, data });
