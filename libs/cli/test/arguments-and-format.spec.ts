import { InvalidArgumentError } from 'commander';
import { parseEnvPair, parseSecretName } from '../src/arguments';
import { firstLines, shortArgs } from '../src/event-printer';

describe('ats arguments', () => {
  it('--env K=V collects pairs; the value may hold "=" and be empty', () => {
    expect(parseEnvPair('B=x=y', parseEnvPair('A=1', {}))).toEqual({ A: '1', B: 'x=y' });
    expect(parseEnvPair('EMPTY=', {})).toEqual({ EMPTY: '' });
  });

  it.each(['novalue', '=v', '1A=v', 'A-B=v'])('--env refuses %j', (pair) => {
    expect(() => parseEnvPair(pair, {})).toThrow(InvalidArgumentError);
  });

  it('--secret takes a variable name only, so a value typed there is refused, not sent', () => {
    expect(parseSecretName('GITHUB_TOKEN', ['A'])).toEqual(['A', 'GITHUB_TOKEN']);
    expect(() => parseSecretName('GITHUB_TOKEN=ghp_123', [])).toThrow('the value is never taken from the command line');
  });
});

describe('event formatting', () => {
  it('shows a lone shell command as it is, other arguments as key=value, cut to the width', () => {
    expect(shortArgs({ command: 'ls -la' })).toBe('ls -la');
    expect(shortArgs({ path: 'a.md', content: 'x\ny', mode: 2 })).toBe('path=a.md content=x\\ny mode=2');
    expect(shortArgs({ content: 'x'.repeat(200) })).toHaveLength(80);
  });

  it('keeps the first lines of a tool output and counts the rest', () => {
    expect(firstLines('a\nb\nc\nd\ne\n')).toEqual(['a', 'b', 'c', '… 2 more lines']);
    expect(firstLines('')).toEqual([]);
    expect(firstLines('one\n')).toEqual(['one']);
  });
});
