import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { extractTarGz } from './untar';

describe('extractTarGz', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'osc-untar-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('writes the directories and files of a tar made by tar(1), byte for byte, with their modes', async () => {
    const src = join(work, 'src');
    mkdirSync(join(src, 'base', '1'), { recursive: true });
    mkdirSync(join(src, 'empty'));
    const big = Buffer.alloc(200_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    writeFileSync(join(src, 'base', '1', '2608_fsm'), big, { mode: 0o600 });
    writeFileSync(join(src, 'PG_VERSION'), '17\n');
    writeFileSync(join(src, 'zero'), '');
    execFileSync('tar', ['-czf', join(work, 'a.tar.gz'), '-C', src, '.']);

    const out = join(work, 'out');
    const names = await extractTarGz(join(work, 'a.tar.gz'), out);

    expect(readFileSync(join(out, 'base', '1', '2608_fsm')).equals(big)).toBe(true);
    expect(readFileSync(join(out, 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(readFileSync(join(out, 'zero'), 'utf8')).toBe('');
    expect(statSync(join(out, 'empty')).isDirectory()).toBe(true);
    expect(statSync(join(out, 'base', '1', '2608_fsm')).mode & 0o777).toBe(0o600);
    expect(names).toEqual(expect.arrayContaining(['PG_VERSION', 'zero', 'empty', 'base/1/2608_fsm']));
  });

  it('refuses an archive cut inside a file', async () => {
    const src = join(work, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'f'), Buffer.alloc(5000, 1));
    execFileSync('tar', ['-cf', join(work, 'a.tar'), '-C', src, 'f']);
    writeFileSync(join(work, 'cut.tar.gz'), gzipSync(readFileSync(join(work, 'a.tar')).subarray(0, 2048)));
    await expect(extractTarGz(join(work, 'cut.tar.gz'), join(work, 'out'))).rejects.toThrow(
      /not a complete tar archive/,
    );
  });

  it('refuses an entry whose name leaves the target folder', async () => {
    const src = join(work, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'f'), 'x');
    execFileSync('tar', ['-cf', join(work, 'a.tar'), '-C', src, '--transform', 's,^f,../escape,', 'f']);
    writeFileSync(join(work, 'bad.tar.gz'), gzipSync(readFileSync(join(work, 'a.tar'))));
    await expect(extractTarGz(join(work, 'bad.tar.gz'), join(work, 'out'))).rejects.toThrow(/tar entry name/);
  });
});
