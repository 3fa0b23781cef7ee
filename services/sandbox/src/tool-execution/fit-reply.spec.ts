import type { ExecuteToolReply } from '@app/contracts';
import { REPLY_CUT_MARKER, fitReply } from './fit-reply';

const reply = (output: string): ExecuteToolReply => ({ status: 'success', output, exitCode: 0, durationMs: 5 });
const size = (r: ExecuteToolReply) => Buffer.byteLength(JSON.stringify(r), 'utf8');

describe('fitReply', () => {
  it('leaves a reply that fits untouched', () => {
    const small = reply('hello');
    expect(fitReply(small, 1000)).toBe(small);
  });

  it('cuts the output of a reply whose JSON is too large, keeping as much as fits, and says so', () => {
    const fitted = fitReply(reply('a'.repeat(5000)), 1000);
    expect(size(fitted)).toBeLessThanOrEqual(1000);
    expect(size(fitted)).toBeGreaterThan(990);
    expect(fitted.output.endsWith(REPLY_CUT_MARKER)).toBe(true);
    expect(fitted).toMatchObject({ status: 'success', exitCode: 0 });
  });

  it('counts JSON escaping: control characters take six bytes each', () => {
    const raw = '\u0001'.repeat(400); // 400 bytes of output, 2400 bytes of JSON
    const fitted = fitReply(reply(raw), 1000);
    expect(size(fitted)).toBeLessThanOrEqual(1000);
    expect(fitted.output.length - REPLY_CUT_MARKER.length).toBeLessThan(160);
  });

  it('refuses a reply that cannot fit even without output', () => {
    expect(() => fitReply({ ...reply('x'), artifacts: [{ path: 'p'.repeat(2000) } as never] }, 1000)).toThrow('even without its output');
  });
});

describe('fitReply with egress records', () => {
  const record = (i: number) => ({
    host: `${'h'.repeat(240)}${i}.example`,
    port: 443,
    allowed: true,
    bytesOut: 1,
    bytesIn: 2,
    durationMs: 3,
  });

  it('keeps the oldest records that fit with the note, and says how many were left out', () => {
    const many = { ...reply('the output'), egress: Array.from({ length: 40 }, (_, i) => record(i)) };
    const fitted = fitReply(many, 5000);
    expect(size(fitted)).toBeLessThanOrEqual(5000);
    const kept = fitted.egress ?? [];
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(40);
    expect(kept).toEqual(many.egress.slice(0, kept.length));
    expect(fitted.output).toMatch(
      new RegExp(`^\\[egress: ${40 - kept.length} connection\\(s\\) not recorded: the reply must fit one bus message\\]\\n`),
    );
  });

  it('leaves the records alone when cutting the output is enough', () => {
    const long = { ...reply('a'.repeat(5000)), egress: [record(1)] };
    const fitted = fitReply(long, 2000);
    expect(fitted.egress).toEqual([record(1)]);
    expect(fitted.output.endsWith(REPLY_CUT_MARKER)).toBe(true);
  });
});
