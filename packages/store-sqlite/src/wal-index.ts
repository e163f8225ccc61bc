import { closeSync, openSync, readSync, realpathSync } from 'node:fs';

/** Bytes of the wal-index header: its two copies (SQLite's WAL format, walformat.html §2.1). */
const WAL_INDEX_HEADER_BYTES = 96;
/** The header's `iVersion`, the only wal-index format there is. */
const WAL_INDEX_VERSION = 3_007_000;

/**
 * Whether any connection committed to a WAL database since the last look, without taking a lock: the
 * first 96 bytes of its `-shm` file are SQLite's wal-index header (two copies of it), which a writer
 * rewrites on every commit (its change counter, last frame and checksums) while it still holds the
 * write lock, so before the commit returns and before the writer's process answers anyone. One
 * `pread` (0.6 µs) instead of `PRAGMA data_version` (1.9 µs: a read transaction, two `fcntl` locks).
 * Equal bytes mean no commit since they were read; anything else (different bytes, a header of an
 * unknown version or not initialised, no `-shm` file, a failed read) means "look". The file is the one
 * SQLite maps for this connection: SQLite keeps it (and its contents) while any connection is open.
 * The same header tells a writer how long its WAL is (`lastFrame`), for the checkpointer.
 */
export class WalIndexHeader {
  private fd: number | undefined;
  private last = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private next = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private readonly scratch = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  /** `last` holds a valid header, read before the last look. */
  private known = false;
  private closed = false;

  /** When to try opening the `-shm` file again after it was not there (ms, `performance.now()`). */
  private retryAt = 0;

  /** `file`: the database as opened (SQLite names the `-shm` file after its real path). */
  constructor(private readonly file: string) {}

  /**
   * True when the header equals the one read at the previous call; false otherwise, after keeping the
   * bytes just read for the next call (the caller then looks at the database itself).
   */
  unchanged(): boolean {
    const valid = this.read(this.next) === WAL_INDEX_HEADER_BYTES && isInitialisedHeader(this.next);
    if (valid && this.known && this.next.equals(this.last)) return true;
    [this.last, this.next] = [this.next, this.last];
    this.known = valid;
    return false;
  }

  /**
   * The WAL's last committed frame (`mxFrame`; 0 once a writer has started the WAL over after a
   * checkpoint copied all of it), or undefined when the header cannot be read.
   */
  lastFrame(): number | undefined {
    const header = this.scratch;
    if (this.read(header) !== WAL_INDEX_HEADER_BYTES || !isInitialisedHeader(header)) return undefined;
    return header.readUInt32LE(0) === WAL_INDEX_VERSION ? header.readUInt32LE(16) : header.readUInt32BE(16);
  }

  /** The header's bytes into `into`: how many were read (0 without the file or on a failed read). */
  private read(into: Buffer): number {
    if (this.closed) return 0;
    if (this.fd === undefined) {
      // Without the file every call says "look"; a failed open (an exception) is tried again once a second.
      const now = performance.now();
      if (now < this.retryAt) return 0;
      try {
        this.fd = openSync(`${realpathSync(this.file)}-shm`, 'r');
      } catch {
        this.retryAt = now + 1000;
        return 0;
      }
    }
    try {
      return readSync(this.fd, into, 0, WAL_INDEX_HEADER_BYTES, 0);
    } catch {
      return 0;
    }
  }

  /** The next call says "look" whatever the header (the look after the last one failed). */
  forget(): void {
    this.known = false;
  }

  close(): void {
    this.closed = true;
    this.known = false;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The first copy names the one wal-index version and is initialised (`isInit`, byte 12). */
function isInitialisedHeader(header: Buffer): boolean {
  const version =
    header.readUInt32LE(0) === WAL_INDEX_VERSION || header.readUInt32BE(0) === WAL_INDEX_VERSION;
  return version && header[12] === 1;
}
