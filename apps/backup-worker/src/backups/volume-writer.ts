import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Address alignment and size granularity of direct writes: a page, which every device accepts. */
const ALIGN = 4096;
/** Step of the alignment probe: allocators align at least this much. */
const PROBE_STEP = 16;
/** Bytes each accepted offset writes, timed, when the probe compares them. */
const TIMED = 256 * 1024;
/** Smallest timed slice worth comparing offsets by. */
const MIN_TIMED = 64 * 1024;
/** Bytes copied into aligned memory and written at once. */
const STAGE = 8 * 1024 * 1024;

const isEinval = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EINVAL';

/**
 * Writes a restore's bytes into its target (a volume file), or a posix backup store's object, with `O_DIRECT` where the filesystem
 * allows it, so they go from memory to the disk without a page-cache page per 4 KiB. On the
 * virtual machines this project is measured on, a page first touched after it was freed is slow:
 * `dd` wrote 2 GiB in 6.4 s with 5.1 s of system CPU through the page cache against 3.7 s and
 * 0.33 s direct (README, "Issue 17, stop 44"), and a restore spent more system CPU than all its
 * decompression and checking. A restore also no longer pushes the machine's working set out of the
 * page cache; the kernel keeps direct and ordinary I/O of one file coherent.
 *
 * Direct writes need positions and lengths in whole pages and memory aligned to the device's DMA
 * alignment, which JavaScript can neither ask for nor see. Bytes are copied into an area of a
 * {@link DirectStaging} (memory at an offset found once, see its probe) and written from there.
 * The part of a write not in whole pages,
 * a filesystem without `O_DIRECT` (tmpfs) or a platform without it go through the page cache,
 * through {@link handle}, which also serves reads, truncation and syncs.
 */
export class VolumeWriter {
  private constructor(
    /** The ordinary handle: reads, truncation, syncs, and writes that cannot go direct. */
    readonly handle: FileHandle,
    private direct: FileHandle | null,
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
      while (
        done < length &&
        (await staging.ready((b, o, n, p) => this.writeDirect(b, o, n, p), src, srcOffset, length, position))
      ) {
        const { buf, at } = staging.area(stage);
        const n = Math.min(STAGE, length - done);
        src.copy(buf, at, srcOffset + done, srcOffset + done + n);
        if (!(await this.writeDirect(buf, at, n, position + done))) break;
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

type DirectWrite = (src: Buffer, from: number, length: number, position: number) => Promise<boolean>;

/**
 * Staging memory for direct writes: `stages` areas of {@link STAGE} bytes in one allocation, at an
 * offset found once (see {@link probe}), areas at whole pages from it. With `idleReleaseMs`, the
 * memory is let go that long after the last area was given back (and found again when needed).
 */
export class DirectStaging {
  /** Whether no offset of the memory was accepted: writes go the ordinary way. */
  failed = false;
  private arena: { buf: Buffer; offset: number | null } | null = null;
  private probing: Promise<boolean> | null = null;
  private readonly free: number[];
  private readonly waiting: ((stage: number) => void)[] = [];
  private releaseTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly stages: number,
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
    if (this.idleReleaseMs > 0 && this.free.length === this.stages && this.probing === null) {
      this.releaseTimer = setTimeout(() => {
        this.releaseTimer = null;
        if (this.free.length === this.stages) this.arena = null;
      }, this.idleReleaseMs);
      this.releaseTimer.unref();
    }
  }

  /** Stage `stage`'s memory and where in it to copy to. */
  area(stage: number): { buf: Buffer; at: number } {
    const arena = this.arena as { buf: Buffer; offset: number };
    return { buf: arena.buf, at: arena.offset + stage * STAGE };
  }

  /**
   * Whether staged direct writes can go on: the staging offset known, or found now by a probe
   * writing the first bytes of the caller's (`n` bytes of `src` from `from`, for `position`).
   */
  async ready(write: DirectWrite, src: Buffer, from: number, n: number, position: number): Promise<boolean> {
    if (this.failed) return false;
    if (this.arena?.offset != null) return true;
    this.probing ??= this.probe(write, src, from, n, position).finally(() => {
      this.probing = null;
    });
    if (await this.probing) return true;
    this.failed = true;
    return false;
  }

  /**
   * Finds the staging offset: of the offsets direct writes accept (a first page of the caller's
   * bytes written from each candidate), the fastest. The kernel accepts memory aligned to the
   * device's DMA alignment (512 bytes here), but only memory aligned to a page wrote into a hole
   * fast: 8 MiB took 9 ms from the one page-aligned offset and 216–222 ms from each of the seven
   * others (overwriting allocated blocks, all were fast). So each accepted offset writes a slice of
   * the caller's bytes at their place, timed, each slice a new part of the range, and the two
   * fastest another slice each; with slices under {@link MIN_TIMED} the first accepted offset is
   * taken. Other staged writes wait for the probe, so that they do not disturb its timing.
   */
  private async probe(
    write: DirectWrite,
    src: Buffer,
    from: number,
    n: number,
    position: number,
  ): Promise<boolean> {
    const arena = (this.arena ??= { buf: Buffer.allocUnsafeSlow(this.stages * STAGE + ALIGN), offset: null });
    const buf = arena.buf;
    const accepted: number[] = [];
    for (let offset = 0; offset < ALIGN; offset += PROBE_STEP) {
      src.copy(buf, offset, from, from + ALIGN);
      if (await write(buf, offset, ALIGN, position)) accepted.push(offset);
    }
    const slice = Math.min(TIMED, Math.floor(n / (accepted.length + 2) / ALIGN) * ALIGN);
    let best = accepted[0];
    if (accepted.length > 1 && slice >= MIN_TIMED) {
      let at = 0;
      const time = async (offset: number): Promise<number> => {
        src.copy(buf, offset, from + at, from + at + slice);
        const t = process.hrtime.bigint();
        const ok = await write(buf, offset, slice, position + at);
        at += slice;
        return ok ? Number(process.hrtime.bigint() - t) : Infinity;
      };
      const ranked: { offset: number; ns: number }[] = [];
      for (const offset of accepted) ranked.push({ offset, ns: await time(offset) });
      ranked.sort((x, y) => x.ns - y.ns);
      for (const r of ranked.slice(0, 2)) r.ns += await time(r.offset);
      ranked.sort((x, y) => x.ns - y.ns);
      best = ranked[0]?.ns === Infinity ? undefined : ranked[0]?.offset;
    }
    if (best === undefined) return false;
    arena.offset = best;
    return true;
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
