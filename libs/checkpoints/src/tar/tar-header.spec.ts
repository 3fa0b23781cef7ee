import { BLOCK, encodeHeaders, encodePaxRecords, padding } from './tar-header';

const text = (block: Buffer, offset: number, width: number) =>
  block
    .subarray(offset, offset + width)
    .toString('latin1')
    .replace(/\0+$/, '');
const octal = (block: Buffer, offset: number, width: number) => parseInt(text(block, offset, width), 8);
const base = { path: 'a.txt', type: 'file' as const, mode: 0o644, size: 5, mtimeMs: 1_700_000_000_999 };

describe('tar header encoding', () => {
  it('writes a ustar block for an entry that fits, with a checksum GNU tar accepts', () => {
    const block = encodeHeaders(base);
    expect(block.length).toBe(BLOCK);
    expect(text(block, 0, 100)).toBe('a.txt');
    expect(octal(block, 100, 8)).toBe(0o644);
    expect([octal(block, 108, 8), octal(block, 116, 8)]).toEqual([0, 0]);
    expect(octal(block, 124, 12)).toBe(5);
    expect(octal(block, 136, 12)).toBe(1_700_000_000);
    expect(text(block, 156, 1)).toBe('0');
    expect(block.subarray(257, 265).toString('latin1')).toBe('ustar\x0000');
    expect([text(block, 265, 32), text(block, 297, 32)]).toEqual(['', '']);
    const unsummed = Buffer.from(block);
    unsummed.fill(0x20, 148, 156);
    expect(octal(block, 148, 7)).toBe(unsummed.reduce((t, b) => t + b, 0));
  });

  it('marks folders with a trailing slash and links with their target, both sized 0', () => {
    const dir = encodeHeaders({ ...base, path: 'd/e', type: 'dir', size: 0 });
    expect([text(dir, 0, 100), text(dir, 156, 1), octal(dir, 124, 12)]).toEqual(['d/e/', '5', 0]);
    const link = encodeHeaders({ ...base, type: 'symlink', size: 0, linkpath: '../x' });
    expect([text(link, 156, 1), text(link, 157, 100)]).toEqual(['2', '../x']);
  });

  it('keeps only permission bits of the mode', () => {
    expect(octal(encodeHeaders({ ...base, mode: 0o100755 }), 100, 8)).toBe(0o755);
  });

  it('puts a name of 101 bytes, a non-ASCII one or one with a control character in a pax record before the entry', () => {
    expect(encodeHeaders({ ...base, path: 'n'.repeat(100) }).length).toBe(BLOCK);
    for (const path of ['n'.repeat(101), 'café.txt', 'line\nbreak']) {
      const blocks = encodeHeaders({ ...base, path });
      expect(blocks.length).toBe(3 * BLOCK);
      expect(text(blocks, 156, 1)).toBe('x');
      const records = blocks.subarray(BLOCK, BLOCK + octal(blocks, 124, 12)).toString('utf8');
      expect(records).toBe(encodePaxRecords([['path', path]]).toString('utf8'));
      expect(text(blocks, 2 * BLOCK + 156, 1)).toBe('0');
    }
  });

  it('puts a long link target, a size of 8 GiB and a time before 1970 in pax records', () => {
    const size = 8 * 1024 ** 3;
    const blocks = encodeHeaders({ ...base, type: 'file', size, mtimeMs: -5000 });
    const records = blocks.subarray(BLOCK, BLOCK + octal(blocks, 124, 12)).toString('utf8');
    expect(records).toBe(`19 size=${size}\n12 mtime=-5\n`);
    expect(octal(blocks, 2 * BLOCK + 124, 12)).toBe(0);
    const link = encodeHeaders({ ...base, type: 'symlink', size: 0, linkpath: 't'.repeat(150) });
    expect(link.subarray(BLOCK, 2 * BLOCK).toString('utf8')).toContain(` linkpath=${'t'.repeat(150)}\n`);
    expect(encodeHeaders({ ...base, size: size - 1 }).length).toBe(BLOCK);
  });

  it('counts the length digits into each pax record, across a change in digit count', () => {
    for (const n of [1, 80, 89, 90, 91, 95, 96, 97, 980, 990, 991, 992, 995]) {
      const record = encodePaxRecords([['path', 'p'.repeat(n)]]).toString('utf8');
      expect(Number(record.split(' ')[0])).toBe(Buffer.byteLength(record));
    }
    const utf8 = encodePaxRecords([['path', '日本']]);
    expect(Number(utf8.toString('utf8').split(' ')[0])).toBe(utf8.length);
  });

  it('pads bodies to whole blocks', () => {
    expect([padding(0).length, padding(1).length, padding(512).length, padding(513).length]).toEqual([0, 511, 0, 511]);
  });
});
