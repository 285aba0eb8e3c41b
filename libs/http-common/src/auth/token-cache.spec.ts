import { ExpiringCache } from './token-cache';

describe('ExpiringCache', () => {
  let now = 1_000;
  const clock = () => now;
  beforeEach(() => (now = 1_000));

  it('returns a value until its own expiry, then forgets it', () => {
    const c = new ExpiringCache<string>(10, clock);
    c.set('a', 'A', 1_500);
    expect(c.get('a')).toBe('A');
    now = 1_499;
    expect(c.get('a')).toBe('A');
    now = 1_500;
    expect(c.get('a')).toBeUndefined();
    expect(c.size).toBe(0);
  });
  it('stores nothing whose expiry is already past', () => {
    const c = new ExpiringCache<string>(10, clock);
    c.set('a', 'A', 1_000);
    expect(c.size).toBe(0);
  });
  it('drops the least recently used entry when full', () => {
    const c = new ExpiringCache<number>(2, clock);
    c.set('a', 1, 9_999);
    c.set('b', 2, 9_999);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3, 9_999);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.get('c')).toBe(3);
    expect(c.size).toBe(2);
  });
  it('rejects a non-positive bound', () => {
    expect(() => new ExpiringCache(0, clock)).toThrow(RangeError);
  });
});
