import { checkArgNames, optionalString, requiredString } from './tool-args';
import { ToolArgumentError } from './tool.errors';

describe('tool arguments', () => {
  it('name every unknown argument and the expected ones', () => {
    expect(() => checkArgNames({ path: 'a', old_text: 'x', new_text: 'y' }, ['path', 'oldText', 'newText'])).toThrow(
      new ToolArgumentError('unknown arguments "old_text", "new_text"; expected path, oldText, newText'),
    );
  });

  it('say when the model sent arguments that were not valid JSON', () => {
    expect(() => checkArgNames({ _raw: '{"path": "a' }, ['path'])).toThrow('the arguments are not valid JSON: {"path": "a');
  });

  it('treat null like a missing argument and fall back for optional ones', () => {
    expect(() => requiredString({ path: null }, 'path')).toThrow('missing required argument "path" (string)');
    expect(optionalString({ path: null }, 'path', '.')).toBe('.');
    expect(() => optionalString({ path: true }, 'path', '.')).toThrow('argument "path" must be a string, got a boolean');
  });
});
