import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BackupCodec } from '@osc/block-storage-domain';

type Reply = { id: number; ok: true } & Record<string, unknown>;
interface Task {
  readonly message: Record<string, unknown>;
  resolve(reply: Reply): void;
  reject(err: Error): void;
}
interface Slot {
  worker: Worker;
  task: (Task & { id: number }) | null;
}

/** What {@link ChunkWorkers.hash} tells about a chunk. */
export interface ChunkHashes {
  /** The chunk's buffer (the one passed in). */
  readonly buf: SharedArrayBuffer;
  /** SHA-256 per hash block (BS-11.5). */
  readonly hashes: string[];
  /** 1 where the block is all zeros. */
  readonly zero: Uint8Array;
}

/**
 * One object to store: its MD5 (of the uncompressed bytes), the codec used and the stored bytes;
 * null bytes (codec `none`) mean the piece's range of the chunk itself, written without a copy.
 */
export interface PackedPiece {
  readonly md5: string;
  readonly codec: BackupCodec;
  readonly bytes: ArrayBuffer | null;
}

/**
 * `b`'s bytes from offset 0 of a SharedArrayBuffer (what the chunk workers take): `into` itself when
 * `b` is already a view of it from its start, else a copy into `into` when they fit, else into a new
 * one (a store that returns buffers of its own: Swift, S3, or no `into` at all).
 */
export function sharedCopy(b: Buffer, into?: SharedArrayBuffer): SharedArrayBuffer {
  if (into !== undefined && b.byteOffset === 0 && b.buffer === into) return into;
  const out =
    into !== undefined && into.byteLength >= b.byteLength ? into : new SharedArrayBuffer(b.byteLength);
  new Uint8Array(out).set(b);
  return out;
}

/** What a restored object is checked against (ChunkWorkers.unpack). */
export interface ObjectCheck {
  /** The manifest's MD5 of the object's bytes. */
  readonly md5: string;
  /** The SHA-256 of each of its `size`-byte blocks (32 bytes each), from the backup's hash file. */
  readonly blocks?: { readonly size: number; readonly digests: Uint8Array };
}

/**
 * A small pool of worker threads doing the CPU work of backups and restores (chunk-worker.js):
 * hashing, MD5, compression and decompression. The event loop keeps reading and writing files
 * while the workers compute, so a backup uses both the disk and every core. Work waits in a queue
 * when every worker is busy; a worker that dies fails its task and is replaced. Idle workers do not
 * keep the process alive.
 *
 * Chunks and stored objects travel as SharedArrayBuffers the caller reuses: the worker and the
 * caller see the same memory, nothing is copied or transferred. They used to be transferred
 * ArrayBuffers, and each one that came back was a new 32 MiB ArrayBuffer to V8: a 4 GiB restore
 * ran ~60 full and ~130 young collections (none with shared buffers), which in the embedded process
 * mark its whole heap, on the cores the hashing needs (docs/issue-17-history.md, "Issue 17, stop 42"). What a worker
 * makes anew (compressed pieces, decompressed objects) comes back as a transferred ArrayBuffer, not
 * a shared one: V8 does not count shared memory towards a collection, so fresh shared buffers
 * dropped by both sides were reclaimed late (a 2 GiB compressible backup and restore grew to
 * 2.2 GB RSS), while these count and go with the next collection.
 */
export class ChunkWorkers {
  private readonly slots: Slot[] = [];
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly size: number) {}

  /** Hashes the chunk: `length` bytes of `buf` from `offset` on. */
  hash(
    buf: SharedArrayBuffer,
    length: number,
    blockSize: number,
    zeroHash: string,
    offset = 0,
  ): Promise<ChunkHashes> {
    return this.run({
      op: 'hash',
      buf,
      offset,
      length,
      blockSize,
      zeroHash,
    }) as unknown as Promise<ChunkHashes>;
  }

  /** Packs `ranges` (chunk-relative) of the chunk (`length` bytes of `buf` from `offset` on). */
  pack(
    buf: SharedArrayBuffer,
    length: number,
    ranges: readonly (readonly [number, number])[],
    codec: BackupCodec,
    offset = 0,
  ): Promise<{ buf: SharedArrayBuffer; pieces: PackedPiece[] }> {
    return this.run({ op: 'pack', buf, offset, length, ranges, codec }) as unknown as Promise<{
      buf: SharedArrayBuffer;
      pieces: PackedPiece[];
    }>;
  }

  /**
   * A stored object's bytes (the first `storedLength` of `stored`), checked against its manifest
   * entry (length and MD5) or, given `check.blocks`, its blocks' SHA-256s from the hash file (MD5
   * still decides when those differ: `hashFileMismatch`); `corrupt` when the object fails. With
   * `sparseBlock` > 0, `runs` lists the parts that are not zeros. `bytes` is `stored` itself for a
   * raw object (its `length` bytes from `bytesOffset` on); else `spare` is `stored`, for the caller
   * to reuse. The stored bytes start at `storedOffset` of `stored`.
   */
  unpack(
    stored: SharedArrayBuffer,
    storedLength: number,
    codec: BackupCodec,
    length: number,
    check: ObjectCheck,
    sparseBlock: number,
    storedOffset = 0,
  ): Promise<
    | { corrupt: true; spare: SharedArrayBuffer }
    | {
        corrupt: false;
        hashFileMismatch: boolean;
        bytes: SharedArrayBuffer | ArrayBuffer;
        /** Where the object's bytes start in `bytes`. */
        bytesOffset: number;
        runs: [number, number][];
        spare: SharedArrayBuffer | null;
      }
  > {
    return this.run({
      op: 'unpack',
      stored,
      storedOffset,
      storedLength,
      codec,
      length,
      md5: check.md5,
      digests: check.blocks?.digests ?? null,
      blockSize: check.blocks?.size ?? 0,
      sparseBlock,
    }) as never;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.waiting.splice(0)) t.reject(new Error('chunk workers closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private run(message: Record<string, unknown>): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error('chunk workers closed'));
    return new Promise<Reply>((resolve, reject) => {
      this.waiting.push({ message, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let slot = this.slots.find((s) => s.task === null);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const task = this.waiting.shift() as Task;
      const id = this.nextId++;
      slot.task = { ...task, id };
      slot.worker.ref();
      slot.worker.postMessage({ ...task.message, id });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(path.join(__dirname, 'chunk-worker.js'), {
      workerData: { zstdModule: require.resolve('@mongodb-js/zstd') },
    });
    const slot: Slot = { worker, task: null };
    worker.unref();
    worker.on('message', (reply: Reply | { id: number; ok: false; message: string }) => {
      const task = slot.task;
      if (!task || task.id !== reply.id) return;
      slot.task = null;
      worker.unref();
      if (reply.ok) task.resolve(reply);
      else task.reject(new Error(reply.message));
      this.dispatch();
    });
    const fail = (err: Error): void => {
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      slot.task?.reject(err);
      slot.task = null;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`chunk worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
