/** Bytes per chunk of row text: a few hundred events. */
const CHUNK_BYTES = 256 * 1024;
/** Free chunks kept for reuse (8 MB); more are left to the garbage collector. */
const POOL_CHUNKS = 32;

/**
 * Chunks of memory outside the JavaScript heap, reused from batch to batch. Reuse matters:
 * allocating fresh external memory for every flush makes V8 run full collections sooner.
 */
export class ChunkPool {
  private readonly free: Buffer[] = [];

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  }

  give(chunks: readonly Buffer[]): void {
    for (const c of chunks) {
      if (this.free.length >= POOL_CHUNKS) return;
      if (c.length === CHUNK_BYTES) this.free.push(c);
    }
  }
}

/**
 * Rows of text (CSV lines for COPY) appended as events arrive and kept outside the JavaScript
 * heap, cut into slices of at most `rowsPerSlice` rows for the writer's statements.
 *
 * Why not keep the events as objects: at 5,000 verifications a second each event lived about
 * a second, long enough to be promoted to the old generation, and the old generation's full
 * collections (10-60 ms pauses on one core) came several times as often as with events
 * dropped. Encoded here at once, an event leaves nothing behind on the heap but a share of a
 * slice view.
 */
export class CsvRows {
  private readonly chunks: Buffer[] = [];
  private chunk: Buffer | undefined;
  private pos = 0;
  private sliceStart = 0;
  private sliceRows = 0;
  private readonly done: Uint8Array[] = [];
  rows = 0;
  /** Bytes of row text held. */
  bytes = 0;
  /** Bytes of memory held for them (whole chunks). */
  held = 0;

  constructor(
    private readonly rowsPerSlice: number,
    private readonly pool: ChunkPool,
  ) {}

  add(row: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8; measure exactly only when close.
    const room = this.chunk ? this.chunk.length - this.pos : 0;
    const bytes = row.length * 3 > room ? Buffer.byteLength(row) : 0;
    if (bytes > room) {
      this.cut();
      this.chunk = bytes > CHUNK_BYTES ? Buffer.allocUnsafeSlow(bytes) : this.pool.take();
      this.chunks.push(this.chunk);
      this.held += this.chunk.length;
      this.pos = 0;
      this.sliceStart = 0;
    }
    const written = (this.chunk as Buffer).write(row, this.pos);
    this.pos += written;
    this.bytes += written;
    this.rows++;
    if (++this.sliceRows >= this.rowsPerSlice) this.cut();
  }

  /** The rows, in order, as consecutive slices (views, valid until `release`). */
  slices(): readonly Uint8Array[] {
    this.cut();
    return this.done;
  }

  /** Gives the memory back; the rows are gone. */
  release(): void {
    this.pool.give(this.chunks);
    this.chunks.length = 0;
    this.done.length = 0;
    this.chunk = undefined;
    this.bytes = 0;
    this.held = 0;
  }

  /** Ends the current slice, if it has rows. */
  private cut(): void {
    if (this.sliceRows === 0 || this.chunk === undefined) return;
    this.done.push(this.chunk.subarray(this.sliceStart, this.pos));
    this.sliceStart = this.pos;
    this.sliceRows = 0;
  }
}
