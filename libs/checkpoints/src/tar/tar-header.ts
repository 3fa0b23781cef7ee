/*
 * Tar header encoding (POSIX.1-2001 pax over ustar), written here rather than through node-tar's
 * Header/Pax: this is all of it, each field is visible, and it never splits a long name into
 * ustar's prefix field or writes the owner names node-tar fills in. The extractor (GNU tar) only
 * needs what is written here; anything ustar cannot hold goes in a pax 'x' record before it.
 */
export const BLOCK = 512;

export type TarType = 'file' | 'dir' | 'symlink';

export interface HeaderFields {
  /** '/'-separated, relative; a folder's is written with a trailing '/'. */
  readonly path: string;
  readonly type: TarType;
  readonly mode: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly linkpath?: string;
}

const TYPE_FLAG: Record<TarType | 'pax', string> = { file: '0', dir: '5', symlink: '2', pax: 'x' };
/** 11 octal digits: sizes and times up to 8 GiB - 1 and the year 2242 fit ustar. */
const MAX_OCTAL_11 = 8 ** 11 - 1;
/** GNU tar and Python name the pax record's own header this way; extractors ignore the name. */
const PAX_HEADER_NAME = '././@PaxHeader';

/** The header block(s) for one entry: a pax record first when ustar cannot hold a value. */
export function encodeHeaders(fields: HeaderFields): Buffer {
  const name = fields.type === 'dir' ? `${fields.path}/` : fields.path;
  const seconds = Math.floor(fields.mtimeMs / 1000);
  const pax: [string, string][] = [];
  if (!fitsUstarText(name)) pax.push(['path', name]);
  if (fields.linkpath !== undefined && !fitsUstarText(fields.linkpath)) pax.push(['linkpath', fields.linkpath]);
  if (fields.size > MAX_OCTAL_11) pax.push(['size', String(fields.size)]);
  if (seconds < 0 || seconds > MAX_OCTAL_11) pax.push(['mtime', String(seconds)]);
  const entry = ustarBlock({
    name,
    typeflag: TYPE_FLAG[fields.type],
    mode: fields.mode & 0o7777,
    size: fields.size <= MAX_OCTAL_11 ? fields.size : 0,
    mtime: seconds >= 0 && seconds <= MAX_OCTAL_11 ? seconds : 0,
    linkname: fields.linkpath ?? '',
  });
  if (pax.length === 0) return entry;
  const records = encodePaxRecords(pax);
  const paxHeader = ustarBlock({
    name: PAX_HEADER_NAME,
    typeflag: TYPE_FLAG.pax,
    mode: 0o644,
    size: records.length,
    mtime: 0,
    linkname: '',
  });
  return Buffer.concat([paxHeader, records, padding(records.length), entry]);
}

/** Zero bytes that fill the last block of a body of `size` bytes. */
export function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** Two zero blocks end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

/** Pax records: `<length> <key>=<value>\n`, where the length counts its own digits. */
export function encodePaxRecords(records: readonly [string, string][]): Buffer {
  return Buffer.concat(
    records.map(([key, value]) => {
      const rest = Buffer.byteLength(` ${key}=${value}\n`);
      let length = rest + String(rest).length;
      if (String(length).length !== String(rest).length) length = rest + String(length).length;
      return Buffer.from(`${length} ${key}=${value}\n`);
    }),
  );
}

/** ustar text fields hold 100 bytes; anything but printable ASCII goes to pax, read back as UTF-8. */
function fitsUstarText(text: string): boolean {
  return text.length <= 100 && /^[\x20-\x7e]*$/.test(text);
}

interface UstarFields {
  readonly name: string;
  readonly typeflag: string;
  readonly mode: number;
  readonly size: number;
  readonly mtime: number;
  readonly linkname: string;
}

/** One 512-byte ustar header; uid/gid 0 and no owner names (extracted --no-same-owner). */
function ustarBlock(fields: UstarFields): Buffer {
  const block = Buffer.alloc(BLOCK);
  // When the real name is in a pax record, this is only a fallback for readers without pax.
  block.write(asciiFallback(fields.name), 0, 100, 'ascii');
  writeOctal(block, 100, 8, fields.mode);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, fields.mtime);
  block.write(fields.typeflag, 156, 1, 'ascii');
  block.write(asciiFallback(fields.linkname), 157, 100, 'ascii');
  block.write('ustar\x0000', 257, 8, 'ascii');
  // The checksum is summed with its own field as eight spaces.
  block.fill(0x20, 148, 156);
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, '0')}\x00 `, 148, 8, 'ascii');
  return block;
}

/** Zero-padded octal digits and a NUL terminator, filling `width` bytes. */
function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  block.write(`${value.toString(8).padStart(width - 1, '0')}\x00`, offset, width, 'ascii');
}

function asciiFallback(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '_').slice(0, 100);
}
