import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Address alignment and size granularity of direct I/O: a page, which every device accepts. */
export const DIRECT_ALIGN = 4096;

/** `length` rounded up to whole pages: what a direct read of `length` bytes reads. */
export const wholePages = (length: number): number => Math.ceil(length / DIRECT_ALIGN) * DIRECT_ALIGN;

/**
 * Bytes of memory a direct read of `length` bytes needs: whole pages, plus a page of room for the
 * offset of the memory the kernel accepts (which {@link VolumeReader.read} finds).
 */
export const directReadRoom = (length: number): number => wholePages(length) + DIRECT_ALIGN;
/** Step of the alignment probe: allocators align at least this much. */
const PROBE_STEP = 16;

/** Memory for one chunk: `SharedArrayBuffer` bytes from `offset` on (shared with the chunk workers). */
export interface ChunkMemory {
  readonly buf: SharedArrayBuffer;
  /** Where the chunk's bytes start; {@link VolumeReader.read} may move it. */
  offset: number;
}

const isEinval = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'EINVAL';

/**
 * Reads a volume (or snapshot) file for a backup, with `O_DIRECT` where the filesystem allows it,
 * so the bytes go from the disk straight into the chunk's memory. Read through the page cache, a
 * backup made the kernel allocate, zero or fill and then copy a page for every 4 KiB of the volume,
 * holes included: on a virtual machine whose memory pages the host takes back while they are free,
 * reading 2 GiB after the cache was dropped took 4.1–4.5 s of system CPU, against 0.04–0.07 s
 * direct (docs/issue-17-history.md, "Issue 17, stop 43"); and a backup no longer pushes the rest of the machine's
 * working set out of the page cache. Direct reads see what buffered writers wrote (the kernel
 * writes dirty pages of the range back first).
 *
 * Direct reads need memory aligned to the device's block size, which JavaScript cannot ask for
 * nor see: {@link allocate} gives a buffer a page larger than asked and finds, by trying small
 * reads, an offset in it that the kernel accepts (again on the first read the kernel refuses: a
 * probe that fell on a hole proves nothing). A filesystem without `O_DIRECT` (tmpfs),
 * a platform without it, or a read the kernel refuses (a size not in whole blocks) falls back to
 * ordinary reads of the same file.
 */
export class VolumeReader {
  /** The offset of the last probe that worked: buffers of one size tend to share it. */
  private lastOffset = 0;
  /** The ordinary handle, once there is one (opened once however many reads fall back at once). */
  private buffered: Promise<FileHandle> | null = null;
  /** A direct handle given up, kept open for the reads still in flight on it. */
  private retired: FileHandle | null = null;

  private constructor(
    private readonly path: string,
    private direct: FileHandle | null,
  ) {}

  static async open(path: string): Promise<VolumeReader> {
    const flag = constants.O_DIRECT;
    if (flag !== undefined && process.platform === 'linux') {
      try {
        return new VolumeReader(path, await open(path, constants.O_RDONLY | flag));
      } catch (err) {
        if (!isEinval(err)) throw err;
      }
    }
    const reader = new VolumeReader(path, null);
    reader.buffered = Promise.resolve(await open(path, 'r'));
    return reader;
  }

  /** Whether reads still go around the page cache. */
  get isDirect(): boolean {
    return this.direct !== null;
  }

  /** Memory for a chunk of `size` bytes, at an offset direct reads accept. */
  async allocate(size: number): Promise<ChunkMemory> {
    if (this.direct === null) return { buf: new SharedArrayBuffer(size), offset: 0 };
    const mem = { buf: new SharedArrayBuffer(size + DIRECT_ALIGN), offset: 0 };
    if (!(await this.probe(mem, 0))) await this.giveUpDirect();
    return mem;
  }

  /**
   * Reads `length` bytes at `position` into `into` (from its offset, which the read may move: use
   * it after the read); bytes past the file's end read as zeros (a source shorter than the volume).
   */
  async read(into: ChunkMemory, length: number, position: number): Promise<void> {
    let filled = 0;
    let probed = false;
    while (filled < length) {
      const view = new Uint8Array(into.buf, into.offset, length);
      let n: number;
      const direct = this.direct;
      if (direct !== null) {
        try {
          n = (await direct.read(view, filled, length - filled, position + filled)).bytesRead;
        } catch (err) {
          if (!isEinval(err)) throw err;
          // A probe on a hole proves nothing (the kernel zeroes holes without checking the
          // memory): find the offset again on these bytes, once, when the request itself is in
          // whole blocks; else read the ordinary way from now on.
          const at = position + filled;
          const aligned = at % DIRECT_ALIGN === 0 && (length - filled) % 512 === 0;
          if (probed || !aligned || !(await this.probe(into, at))) await this.giveUpDirect();
          probed = true;
          filled = 0;
          continue;
        }
      } else {
        const fh = await (this.buffered as Promise<FileHandle>);
        n = (await fh.read(view, filled, length - filled, position + filled)).bytesRead;
      }
      if (n === 0) break;
      filled += n;
    }
    if (filled < length) new Uint8Array(into.buf, into.offset + filled, length - filled).fill(0);
  }

  /**
   * Finds an offset of `mem` direct reads accept, by reading a page at `position` into it at each
   * offset in turn (the last one found first: buffers of one size tend to share it).
   */
  private async probe(mem: ChunkMemory, position: number): Promise<boolean> {
    const direct = this.direct;
    if (direct === null || mem.buf.byteLength < DIRECT_ALIGN * 2) return false;
    const offsets = [this.lastOffset];
    for (let o = 0; o < DIRECT_ALIGN; o += PROBE_STEP) if (o !== this.lastOffset) offsets.push(o);
    for (const offset of offsets) {
      try {
        await direct.read(new Uint8Array(mem.buf, offset, DIRECT_ALIGN), 0, DIRECT_ALIGN, position);
        this.lastOffset = offset;
        mem.offset = offset;
        return true;
      } catch (err) {
        if (!isEinval(err)) throw err;
      }
    }
    return false;
  }

  async close(): Promise<void> {
    const buffered = await this.buffered?.catch(() => null);
    await Promise.all([this.direct?.close(), this.retired?.close(), buffered?.close()]);
  }

  /** Ordinary reads from now on (the direct handle stays open for reads in flight until close). */
  private async giveUpDirect(): Promise<void> {
    this.buffered ??= open(this.path, 'r');
    if (this.direct !== null) {
      this.retired = this.direct;
      this.direct = null;
    }
    await this.buffered;
  }
}
