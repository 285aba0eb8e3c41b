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
 * Writes a restore's bytes into its target (a volume file) with `O_DIRECT` where the filesystem
 * allows it, so they go from memory to the disk without a page-cache page per 4 KiB. On the
 * virtual machines this project is measured on, a page first touched after it was freed is slow:
 * `dd` wrote 2 GiB in 6.4 s with 5.1 s of system CPU through the page cache against 3.7 s and
 * 0.33 s direct (README, "Issue 17, stop 44"), and a restore spent more system CPU than all its
 * decompression and checking. A restore also no longer pushes the machine's working set out of the
 * page cache; the kernel keeps direct and ordinary I/O of one file coherent.
 *
 * Direct writes need positions and lengths in whole pages and memory aligned to the device's DMA
 * alignment, which JavaScript can neither ask for nor see. A write is tried directly from the
 * caller's memory; once the kernel refuses that, bytes are copied into one of `stages` staging
 * areas of one allocation, at an offset found once (see {@link probe}). Writes not in whole pages,
 * a filesystem without `O_DIRECT` (tmpfs) or a platform without it go through the page cache,
 * through {@link handle}, which also serves reads, truncation and syncs.
 */
export class VolumeWriter {
  /** Whether the callers' memory was refused once (then every direct write is staged). */
  private stageAlways = false;
  /** The staging memory: `stages` areas of {@link STAGE} bytes from `offset` on, once found. */
  private arena: { buf: Buffer; offset: number | null } | null = null;
  private probing: Promise<boolean> | null = null;
  private readonly free: number[];
  private readonly waiting: ((stage: number) => void)[] = [];

  private constructor(
    /** The ordinary handle: reads, truncation, syncs, and writes that cannot go direct. */
    readonly handle: FileHandle,
    private direct: FileHandle | null,
    private readonly stages: number,
  ) {
    this.free = Array.from({ length: stages }, (_, i) => i);
  }

  /** `concurrency`: writes staged at once (more wait for a free area). */
  static async open(path: string, concurrency = 4): Promise<VolumeWriter> {
    const stages = Math.max(1, concurrency);
    const handle = await open(path, 'r+');
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
    return this.direct !== null;
  }

  /** Writes `length` bytes of `src` from `srcOffset` on at `position` of the file. */
  async write(src: Buffer, srcOffset: number, length: number, position: number): Promise<void> {
    if (this.direct !== null && position % ALIGN === 0 && length % ALIGN === 0) {
      if (!this.stageAlways) {
        if (await this.writeDirect(src, srcOffset, length, position)) return;
        this.stageAlways = true;
      }
      const stage = await this.takeStage();
      try {
        let done = 0;
        while (done < length && (await this.staging(src, srcOffset, length, position))) {
          const arena = this.arena as { buf: Buffer; offset: number };
          const at = arena.offset + stage * STAGE;
          const n = Math.min(STAGE, length - done);
          src.copy(arena.buf, at, srcOffset + done, srcOffset + done + n);
          if (!(await this.writeDirect(arena.buf, at, n, position + done))) break;
          done += n;
        }
        srcOffset += done;
        position += done;
        length -= done;
      } finally {
        this.giveStage(stage);
      }
      if (length === 0) return;
    }
    await writeAll(this.handle, src, srcOffset, length, position);
  }

  async close(): Promise<void> {
    await Promise.all([this.direct?.close(), this.handle.close()]);
  }

  private takeStage(): Promise<number> {
    const free = this.free.pop();
    if (free !== undefined) return Promise.resolve(free);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private giveStage(stage: number): void {
    const next = this.waiting.shift();
    if (next) next(stage);
    else this.free.push(stage);
  }

  /** Whether staged direct writes can go on: the staging offset known, found now, or given up. */
  private async staging(src: Buffer, from: number, n: number, position: number): Promise<boolean> {
    if (this.direct === null) return false;
    if (this.arena?.offset != null) return true;
    this.probing ??= this.probe(src, from, n, position);
    if (await this.probing) return true;
    this.direct = null;
    return false;
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

  /**
   * Finds the staging offset, once per writer (the areas lie at whole pages from it): of the offsets
   * direct writes accept (a first page of the caller's bytes written from each candidate), the
   * fastest. The kernel accepts memory aligned to the device's DMA alignment (512 bytes here), but
   * only memory aligned to a page wrote into a hole fast: 8 MiB took 9 ms from the one page-aligned
   * offset and 216–222 ms from each of the seven others (overwriting allocated blocks, all were
   * fast). So each accepted offset writes a slice of the caller's bytes at their place, timed, each
   * slice a new part of the range, and the two fastest another slice each; with slices under
   * {@link MIN_TIMED} the first accepted offset is taken. Other staged writes wait for the probe, so
   * that they do not disturb its timing.
   */
  private async probe(src: Buffer, from: number, n: number, position: number): Promise<boolean> {
    const buf = (this.arena ??= { buf: Buffer.allocUnsafeSlow(this.stages * STAGE + ALIGN), offset: null })
      .buf;
    const accepted: number[] = [];
    for (let offset = 0; offset < ALIGN; offset += PROBE_STEP) {
      src.copy(buf, offset, from, from + ALIGN);
      if (await this.writeDirect(buf, offset, ALIGN, position)) accepted.push(offset);
    }
    const slice = Math.min(TIMED, Math.floor(n / (accepted.length + 2) / ALIGN) * ALIGN);
    let best = accepted[0];
    if (accepted.length > 1 && slice >= MIN_TIMED) {
      let at = 0;
      const time = async (offset: number): Promise<number> => {
        src.copy(buf, offset, from + at, from + at + slice);
        const t = process.hrtime.bigint();
        const ok = await this.writeDirect(buf, offset, slice, position + at);
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
    this.arena.offset = best;
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
