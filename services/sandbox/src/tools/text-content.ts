import { ToolFailure } from './tool.errors';

/**
 * File tools handle UTF-8 text only. A NUL byte is the usual tell of binary data (git and grep
 * use the same test); UTF-8 text never contains one outside of a literal U+0000.
 */
export function assertText(bytes: Uint8Array, path: string, size: number): void {
  if (bytes.includes(0)) {
    throw new ToolFailure(`${JSON.stringify(path)} is a binary file (${size} bytes); the file tools only handle UTF-8 text`);
  }
}
