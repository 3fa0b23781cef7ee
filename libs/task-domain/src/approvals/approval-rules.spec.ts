import type { ApprovalRule } from '../task.events';
import { findMatchingRule, ruleFor } from './approval-rules';
import { analyseShellCommand } from './shell-command';

const shell = (command: string) => ({ command });

describe('shell command analysis', () => {
  it.each([
    ['ls -la', ['ls']],
    ['ls && rm -rf x', ['ls', 'rm']],
    ['ls | grep a; wc -l < in.txt || true', ['grep', 'ls', 'true', 'wc']],
    ['echo \'a;b && c\' "d | e"', ['echo']],
    ['cat <<EOF\nx; rm -rf /\nEOF', ['cat']],
    ['grep -r x . 2>/dev/null', ['grep']],
    ['make 2>&1', ['make']],
    ['if test -f a; then cat a; fi', ['cat', 'test']],
    ['(cd src && ls)', ['cd', 'ls']],
    ['find . -name "*.ts"', ['find']],
  ])('names every program of %j', (command, programs) => expect(analyseShellCommand(command)).toEqual({ vouchable: true, programs }));

  it.each([
    ['echo $(id)', 'command substitution'],
    ['echo `id`', 'command substitution'],
    ['diff <(ls a) <(ls b)', 'process substitution'],
    ['cat a > b', 'output redirection'],
    ['echo x >> log', 'output redirection'],
    ['ls &> out', 'output redirection'],
    ['ls 1>&out', 'output redirection'],
    ['PATH=/tmp/x ls', 'a variable assignment'],
    ['X=1', 'a variable assignment'],
    ['export PATH=/tmp', 'a declaration (export, declare, local, …)'],
    ['ls(){ rm -rf x; }; ls', 'a function definition'],
    ['eval ls', '`eval` runs code that its name does not vouch for'],
    ['exec ls', '`exec` runs code that its name does not vouch for'],
    ['sh -c "ls"', '`sh` runs code that its name does not vouch for'],
    ['bash -c ls', '`bash` runs code that its name does not vouch for'],
    ['ls | xargs rm', '`xargs` runs code that its name does not vouch for'],
    ['find . -exec rm {} ;', '`find -exec`'],
    ['find . -delete', '`find -delete`'],
    ['$CMD x', 'a program name that is not a plain word'],
    ['"ls" x', 'a program name that is not a plain word'],
    ['ls (', 'the command does not parse'],
    ['   ', 'no command'],
  ])('never vouches for %j (%s)', (command, reason) => expect(analyseShellCommand(command)).toEqual({ vouchable: false, reason }));
});

describe('approval rules', () => {
  const approvedLs: ApprovalRule[] = [{ toolName: 'shell', programs: ['ls'] }];

  it('records the programs of an approved shell line, and no rule when the line cannot be vouched for', () => {
    expect(ruleFor('shell', shell('ls -la | grep x'))).toEqual({ toolName: 'shell', programs: ['grep', 'ls'] });
    expect(ruleFor('shell', shell('echo $(id)'))).toBeUndefined();
  });

  it('approves a later line only when every program in it was approved, across rules', () => {
    expect(findMatchingRule(approvedLs, 'shell', shell('ls src'))).toEqual({ toolName: 'shell', programs: ['ls'] });
    expect(findMatchingRule(approvedLs, 'shell', shell('ls && rm -rf x'))).toBeUndefined();
    expect(findMatchingRule(approvedLs, 'shell', shell('ls > listing.txt'))).toBeUndefined();
    const both: ApprovalRule[] = [...approvedLs, { toolName: 'shell', programs: ['wc'] }];
    expect(findMatchingRule(both, 'shell', shell('ls | wc -l'))).toEqual({ toolName: 'shell', programs: ['ls', 'wc'] });
  });

  it('treats a quoted separator as text, not as a second command', () => {
    const echo: ApprovalRule[] = [{ toolName: 'shell', programs: ['echo'] }];
    expect(findMatchingRule(echo, 'shell', shell("echo 'a; rm -rf x'"))).toBeDefined();
    expect(findMatchingRule(echo, 'shell', shell('echo a; rm -rf x'))).toBeUndefined();
  });

  it('reads a rule recorded before `programs` existed', () => {
    expect(findMatchingRule([{ toolName: 'shell', program: 'ls' }], 'shell', shell('ls -l'))).toBeDefined();
  });

  it('approves every later edit of the same file tool, whatever the path ("allow all edits")', () => {
    const rule = ruleFor('write_file', { path: './downloads//a.md', content: 'x' });
    expect(rule).toEqual({ toolName: 'write_file' });
    expect(findMatchingRule([rule!], 'write_file', { path: 'downloads/a.md', content: 'y' })).toEqual(rule);
    expect(findMatchingRule([rule!], 'write_file', { path: 'src/other.ts', content: 'y' })).toEqual(rule);
    expect(findMatchingRule([rule!], 'edit_file', { path: 'downloads/a.md', oldText: 'x', newText: 'y' })).toBeUndefined();
    expect(ruleFor('edit_file', { path: 'a.md' })).toEqual({ toolName: 'edit_file' });
  });

  it('reads a file rule recorded when edits were scoped to one path as approving the whole tool', () => {
    expect(findMatchingRule([{ toolName: 'edit_file', path: 'a.md' }], 'edit_file', { path: 'b.md', oldText: 'x', newText: 'y' })).toEqual({
      toolName: 'edit_file',
      path: 'a.md',
    });
  });

  it('scopes MCP tools to the same server and tool, and other tools to their name', () => {
    const mcp = ruleFor('mcp__github__create_issue', { title: 'x' })!;
    expect(findMatchingRule([mcp], 'mcp__github__create_issue', { title: 'y' })).toEqual(mcp);
    expect(findMatchingRule([mcp], 'mcp__github__delete_repo', {})).toBeUndefined();
    expect(findMatchingRule([mcp], 'mcp__gitlab__create_issue', {})).toBeUndefined();
    expect(findMatchingRule([{ toolName: 'list_files' }], 'list_files', { path: 'src' })).toEqual({ toolName: 'list_files' });
    expect(findMatchingRule([{ toolName: 'list_files' }], 'read_file', { path: 'src' })).toBeUndefined();
  });
});
