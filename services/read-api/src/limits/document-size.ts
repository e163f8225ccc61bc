import { graphqlError } from '../errors.js';

export interface SizeLimits {
  /** Longest document, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of `{`, `(` and `[` outside strings and comments. */
  readonly maxNesting: number;
}

/** Bracket nesting allowed for a depth limit: fields, arguments and list/object values nest brackets. */
export const nestingFor = (maxDepth: number): number => Math.max(64, 4 * maxDepth);

const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;
const NEWLINE = 10;
const RETURN = 13;

/**
 * Refuses a document by its size before the parser (which recurses once per nesting level and would
 * overflow the stack on a deep enough document) sees it: one pass over the text, skipping strings,
 * block strings and comments. Throws EGGMESH_GRAPHQL_TOO_LARGE.
 */
export function checkDocumentSize(source: string, limits: SizeLimits): void {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes: only count bytes when it could matter.
  if (source.length * 3 > limits.maxBytes) {
    const bytes = Buffer.byteLength(source, 'utf8');
    if (bytes > limits.maxBytes) {
      throw graphqlError(
        'TOO_LARGE',
        `the query document has ${bytes} bytes; the limit is ${limits.maxBytes}`,
      );
    }
  }
  let depth = 0;
  const n = source.length;
  for (let i = 0; i < n; i++) {
    const c = source.charCodeAt(i);
    // { ( [ open, } ) ] close.
    if (c === 123 || c === 40 || c === 91) {
      if (++depth > limits.maxNesting) {
        throw graphqlError(
          'TOO_LARGE',
          `the query document nests brackets more than ${limits.maxNesting} deep`,
        );
      }
    } else if (c === 125 || c === 41 || c === 93) {
      depth--;
    } else if (c === HASH) {
      while (i + 1 < n && source.charCodeAt(i + 1) !== NEWLINE && source.charCodeAt(i + 1) !== RETURN) i++;
    } else if (c === QUOTE) {
      if (source.startsWith('""', i + 1)) {
        // Block string: ends at the next unescaped """.
        const end = blockStringEnd(source, i + 3);
        i = end < 0 ? n : end + 2;
      } else {
        i++;
        while (i < n) {
          const d = source.charCodeAt(i);
          if (d === BACKSLASH) i += 2;
          else if (d === QUOTE || d === NEWLINE || d === RETURN) break;
          else i++;
        }
      }
    }
  }
}

function blockStringEnd(source: string, from: number): number {
  let at = source.indexOf('"""', from);
  while (at > 0 && source.charCodeAt(at - 1) === BACKSLASH) at = source.indexOf('"""', at + 1);
  return at;
}
