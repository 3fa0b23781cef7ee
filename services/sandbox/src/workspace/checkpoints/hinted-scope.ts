import type { Hints } from './change-hints';

/** How a checkpoint told what changed treats a folder: walked whole, re-listed, or taken from the last checkpoint as it was. */
export type FolderScope = 'whole' | 'hinted' | 'reuse';

/**
 * Which folders a hinted checkpoint re-lists: the touched ones and every folder above a touched
 * folder or a subtree (to reach them; the top always). A subtree, and a folder the last
 * checkpoint did not have, is walked whole: what is inside it came without events of its own.
 */
export class HintedScope {
  private readonly listed = new Set<string>(['']);
  private static readonly NONE: ReadonlySet<string> = new Set();

  constructor(private readonly hints: Hints) {
    for (const path of [...hints.touched, ...hints.subtrees]) {
      for (let at = path; !this.listed.has(at); at = parentOf(at)) this.listed.add(at);
    }
  }

  /**
   * For a folder of scope 'hinted': the names of its entries to look at again, the rest being as
   * they were (none for a folder only passed through); undefined when it is re-listed whole.
   */
  namesIn(path: string): ReadonlySet<string> | undefined {
    if (!this.hints.touched.has(path)) return HintedScope.NONE;
    return this.hints.names?.get(path);
  }

  /** The scope of the folder at `path`, met in a re-listed folder; `known`: the last checkpoint had a folder there. */
  of(path: string, known: boolean): FolderScope {
    if (this.hints.subtrees.has(path) || !known) return 'whole';
    return this.listed.has(path) ? 'hinted' : 'reuse';
  }
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}
