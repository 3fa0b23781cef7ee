// The small part of mvdan-sh (mvdan/sh's parser compiled to JavaScript) that we use; the package
// ships no types.
declare module 'mvdan-sh' {
  export interface ShNode {
    readonly [field: string]: unknown;
  }
  export interface ShParser {
    /** Throws on a syntax error. */
    Parse(src: string, name: string): ShNode;
  }
  export const syntax: {
    NewParser(): ShParser;
    /** Visits every node depth-first; returning false skips a node's children. */
    Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
    NodeType(node: ShNode): string;
  };
}
