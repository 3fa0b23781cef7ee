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
 * no such parser. Proved by services/api/test/hostile-input.e2e-spec.ts (the 20 KB part).
 *
 * Upstream: no report of this exact trigger yet; the same class of stall (Dicer left paused once
 * its parts are done) is mscdex/dicer#9 (https://github.com/mscdex/dicer/pull/9), and a sibling
 * in @fastify/busboy is fastify/busboy#228 (https://github.com/fastify/busboy/issues/228).
 *
 * Why at run time rather than a patch-package patch of node_modules: patch-package is not
 * installed here and cannot be added offline, and a postinstall patch would also have to run in
 * the images' `npm ci --omit=dev`, making patch-package a production dependency. The reasons,
 * and when to switch, are in docs/contributing.md "Patched dependencies".
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
