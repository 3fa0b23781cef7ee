import { createRequire } from 'node:module';
import { dirname } from 'node:path';

interface DicerPrototype {
  _realFinish?: boolean;
  _unpause?: () => void;
  emit(event: string | symbol, ...args: unknown[]): boolean;
}

const patched = new WeakSet<object>();

/**
 * @fastify/busboy (3.2.6, under @fastify/multipart) can stop reading a multipart body for good.
 * A part it skips (no Content-Disposition, say) is only read on the next tick; when more than its
 * 16 KiB buffer of it and the closing boundary arrive in one chunk, its parser (Dicer) pauses on
 * that chunk's write callback, then finishes once the part is read, still paused: the request is
 * never read to its end and never answered (a 20 KB part without Content-Disposition was enough).
 * This releases the paused write when the parser finishes, after which it ignores any further
 * data anyway. Applied to the busboy that @fastify/multipart loads; a no-op if that busboy has
 * no such parser.
 */
export function releaseMultipartParserOnFinish(): void {
  const busboy = require.resolve('@fastify/busboy', { paths: [dirname(require.resolve('@fastify/multipart'))] });
  const { Dicer } = createRequire(__filename)(busboy) as { Dicer?: { prototype: DicerPrototype } };
  const proto = Dicer?.prototype;
  if (!proto || typeof proto._unpause !== 'function' || patched.has(proto)) return;
  patched.add(proto);
  const emit = proto.emit;
  proto.emit = function (this: DicerPrototype, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'finish' && this._realFinish) this._unpause?.();
    return emit.call(this, event, ...args);
  };
}
