import { compress, decompressInto, MAX_INPUT_BYTES } from './chunk-codec.js';

/**
 * How corpus_chunks.text holds a chunk (migrations/sqlite/0023): a BLOB, the byte length of the chunk's
 * UTF-8 (uint16 LE), then that UTF-8 compressed (chunk-codec.ts, LZ77). Stored as it was, the
 * chunks cost 1.14× their document's text (the overlap) before any row overhead, and a corpus took
 * ~1.9× its text on disk; compressed, ~0.7× (prose) to ~0.8× (markdown), the corpus ~1.3-1.5×
 * (docs/retrieval.md#retrieval-corpora, test/api/corpus-storage.test.ts). Per chunk, not per
 * document: a search decodes only the chunks it returns, never a whole document. Not zlib: an
 * inflate call costs ~100-200 µs in Node whatever its size (measured in a search worker: +0.24 ms a
 * search of 8 hits, ~7%); these chunks decode in a few µs each.
 * The FTS5 index is contentless and is given the text itself, so ranking is untouched.
 *
 * Rows written before 0023 hold TEXT: `unpackChunks` reads both, and the SQLite store's
 * `compressLegacyChunks` (store/sqlite/legacy-chunks.ts) rewrites them in the background, a batch per
 * commit. Free of any driver: the PostgreSQL store keeps its chunks the same way (a BYTEA).
 */

const LENGTH_BYTES = 2;
/** Decoded chunks land here, then become a string: no allocation per chunk. */
const decoded = Buffer.allocUnsafe(MAX_INPUT_BYTES);

export function packChunk(text: string): Buffer {
  const utf8 = Buffer.from(text, 'utf8');
  if (utf8.length > MAX_INPUT_BYTES) {
    throw new Error(`a chunk of ${utf8.length} bytes is longer than CHUNK_CHARS allows`);
  }
  const packed = compress(utf8, LENGTH_BYTES);
  packed.writeUInt16LE(utf8.length, 0);
  return packed;
}

export function unpackChunk(stored: string | Buffer): string {
  if (typeof stored === 'string') return stored;
  const size = stored.readUInt16LE(0);
  decompressInto(stored, LENGTH_BYTES, decoded, size);
  return decoded.toString('utf8', 0, size);
}

/** The chunks' texts, in order, from either form a row may hold. */
export function unpackChunks(stored: ReadonlyArray<string | Buffer>): string[] {
  return stored.map(unpackChunk);
}
