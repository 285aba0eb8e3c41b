import { md5Hex } from './md5';

describe('md5Hex', () => {
  it.each([
    ['', 'd41d8cd98f00b204e9800998ecf8427e'],
    ['a', '0cc175b9c0f1b6a831c399e269772661'],
    ['abc', '900150983cd24fb0d6963f7d28e17f72'],
    ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
    ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
    [
      '12345678901234567890123456789012345678901234567890123456789012345678901234567890',
      '57edf4a22be3c955ac49da2e2107b67a',
    ],
    ['The quick brown fox jumps over the lazy dog', '9e107d9d372bb6826bd81d3542a419d6'],
  ])('RFC 1321 vector %j', (text, hex) => {
    expect(md5Hex(text)).toBe(hex);
  });

  it('hashes the UTF-8 bytes', () => {
    // Values from Python's hashlib on the UTF-8 encoding.
    expect(md5Hex('\u00e9')).toBe('66ddcd97cfdeabb2f6fb8a999b4bc76f');
    expect(md5Hex('\u{1F600} workflow')).toBe('c4d2f0a93245e782807aa3612077fed5');
  });

  it('handles block boundaries', () => {
    const seen = new Set<string>();
    for (let n = 50; n <= 70; n++) seen.add(md5Hex('x'.repeat(n)));
    expect(seen.size).toBe(21);
  });
});
