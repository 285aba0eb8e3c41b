import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { DIRECT_ALIGN as ALIGN } from './volume-reader';

/** A WebAssembly memory page. */
const WASM_PAGE = 64 * 1024;
/** Bytes copied into aligned memory and written at once (whole WebAssembly pages). */
const STAGE = 8 * 1024 * 1024;

/** WebAssembly.Memory (the project's TypeScript libraries do not declare WebAssembly). */
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };
  }
).WebAssembly.Memory;

const isEinval = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EINVAL';

/**
 * Writes a restore's bytes into its target (a volume file), or a posix backup store's object, with `O_DIRECT` where the filesystem
 * allows it, so they go from memory to the disk without a page-cache page per 4 KiB. On the
 * virtual machines this project is measured on, a page first touched after it was freed is slow:
 * `dd` wrote 2 GiB in 6.4 s with 5.1 s of system CPU through the page cache against 3.7 s and
 * 0.33 s direct (docs/issue-17-history.md, "Issue 17, stop 44"), and a restore spent more system CPU than all its
 * decompression and checking. A restore also no longer pushes the machine's working set out of the
 * page cache; the kernel keeps direct and ordinary I/O of one file coherent.
 *
 * Direct writes need positions and lengths in whole pages and memory aligned to the device's DMA
 * alignment, which JavaScript cannot ask for. Bytes are copied into an area of a
 * {@link DirectStaging} (page-aligned memory) and written from there.
 * The part of a write not in whole pages,
 * a filesystem without `O_DIRECT` (tmpfs) or a platform without it go through the page cache,
 * through {@link handle}, which also serves reads, truncation and syncs.
 */
export class VolumeWriter {
  private constructor(
    /** The ordinary handle: reads, truncation, syncs, and writes that cannot go direct. */
    readonly handle: FileHandle,
    private readonly direct: FileHandle | null,
    private readonly staging: DirectStaging,
  ) {}

  /**
   * Opens an existing file (`r+`), or creates or truncates one (`w`). `staging`: the staging memory
   * to use (shared by writers to files of one filesystem), or how many writes it stages at once.
   */
  static async open(
    path: string,
    staging: DirectStaging | number = 4,
    mode: 'r+' | 'w' = 'r+',
  ): Promise<VolumeWriter> {
    const stages = typeof staging === 'number' ? new DirectStaging(staging) : staging;
    const handle = await open(path, mode, 0o600);
    const flag = constants.O_DIRECT;
    if (flag === undefined || process.platform !== 'linux') return new VolumeWriter(handle, null, stages);
    try {
      return new VolumeWriter(handle, await open(path, constants.O_WRONLY | flag), stages);
    } catch (err) {
      if (!isEinval(err)) {
        await handle.close();
        throw err;
      }
      return new VolumeWriter(handle, null, stages);
    }
  }

  /** Whether writes in whole pages still go around the page cache. */
  get isDirect(): boolean {
    return this.direct !== null && !this.staging.failed;
  }

  /**
   * Writes `length` bytes of `src` from `srcOffset` on at `position` of the file: the part in whole
   * pages directly where it can, the rest the ordinary way.
   */
  async write(src: Buffer, srcOffset: number, length: number, position: number): Promise<void> {
    const whole = length - (length % ALIGN);
    if (this.isDirect && position % ALIGN === 0 && whole > 0) {
      const done = await this.writeWhole(src, srcOffset, whole, position);
      srcOffset += done;
      position += done;
      length -= done;
    }
    if (length > 0) await writeAll(this.handle, src, srcOffset, length, position);
  }

  async close(): Promise<void> {
    await Promise.all([this.direct?.close(), this.handle.close()]);
  }

  /**
   * Writes whole pages directly, staged; returns how many bytes it wrote. Never from the caller's
   * memory: the kernel may accept it (aligned to 512 bytes) and write it 24 times slower than from a
   * page-aligned stage (a backup's objects took 42 s against 7).
   */
  private async writeWhole(
    src: Buffer,
    srcOffset: number,
    length: number,
    position: number,
  ): Promise<number> {
    const staging = this.staging;
    const stage = await staging.take();
    let done = 0;
    try {
      while (done < length && !staging.failed) {
        const { buf, at } = staging.area(stage);
        const n = Math.min(STAGE, length - done);
        src.copy(buf, at, srcOffset + done, srcOffset + done + n);
        if (!(await this.writeDirect(buf, at, n, position + done))) {
          staging.failed = true;
          break;
        }
        done += n;
      }
    } finally {
      staging.give(stage);
    }
    return done;
  }

  /** Writes directly from `src`; false when the kernel refuses the request (nothing written then). */
  private async writeDirect(src: Buffer, from: number, length: number, position: number): Promise<boolean> {
    const direct = this.direct;
    if (direct === null) return false;
    try {
      await writeAll(direct, src, from, length, position);
      return true;
    } catch (err) {
      if (!isEinval(err)) throw err;
      return false;
    }
  }
}

/**
 * Staging memory for direct writes: `stages` areas of {@link STAGE} bytes in one allocation whose
 * start is page-aligned. With `idleReleaseMs`, the memory is let go that long after the last area
 * was given back (and allocated again when needed).
 *
 * The kernel accepted memory aligned to the device's DMA alignment (512 bytes on this project's
 * machines), but only memory aligned to a page wrote into a hole fast: 8 MiB took 6–9 ms from a
 * page-aligned address and 154–262 ms from each of the seven other accepted offsets of a page. A
 * JavaScript buffer's address cannot be seen (timing writes from each offset told them apart only
 * most of the time: one backup of five took 13 s instead of 7), but a WebAssembly memory's buffer
 * starts on a page boundary: V8 maps it from the page allocator.
 */
export class DirectStaging {
  /** Whether direct writes from the staging memory were refused: writes go the ordinary way. */
  failed = false;
  private arena: Buffer | null = null;
  private readonly stages: number;
  private readonly free: number[];
  private readonly waiting: ((stage: number) => void)[] = [];
  private releaseTimer: NodeJS.Timeout | null = null;

  constructor(
    stages: number,
    private readonly idleReleaseMs = 0,
  ) {
    this.stages = Math.max(1, stages);
    this.free = Array.from({ length: this.stages }, (_, i) => i);
  }

  take(): Promise<number> {
    if (this.releaseTimer !== null) clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
    const free = this.free.pop();
    if (free !== undefined) return Promise.resolve(free);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(stage: number): void {
    const next = this.waiting.shift();
    if (next) return next(stage);
    this.free.push(stage);
    if (this.idleReleaseMs > 0 && this.free.length === this.stages) {
      this.releaseTimer = setTimeout(() => {
        this.releaseTimer = null;
        if (this.free.length === this.stages) this.arena = null;
      }, this.idleReleaseMs);
      this.releaseTimer.unref();
    }
  }

  /** Stage `stage`'s memory (taken) and where in it its area starts, a page boundary. */
  area(stage: number): { buf: Buffer; at: number } {
    if (this.arena === null) {
      const pages = Math.ceil((this.stages * STAGE) / WASM_PAGE);
      this.arena = Buffer.from(new WasmMemory({ initial: pages, maximum: pages }).buffer);
    }
    return { buf: this.arena, at: stage * STAGE };
  }
}

async function writeAll(
  fh: FileHandle,
  src: Buffer,
  from: number,
  length: number,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await fh.write(src, from + done, length - done, position + done);
    done += bytesWritten;
  }
}
