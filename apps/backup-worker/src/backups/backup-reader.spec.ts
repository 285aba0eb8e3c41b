import { Gate } from './backup-reader';

/** Lets every settled promise's continuations run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Asks `gate` for each holder's units in turn; returns the names let in so far, in order. */
function admit(gate: Gate, holders: readonly (readonly [name: string, units: number])[]): string[] {
  const entered: string[] = [];
  for (const [name, units] of holders) void gate.enter(units).then(() => entered.push(name));
  return entered;
}

describe('Gate (the units a restore holds in flight)', () => {
  it('admits holders up to its limit and the next one when units are left', async () => {
    const gate = new Gate(4);
    const entered = admit(
      gate,
      ['a', 'b', 'c', 'd', 'e'].map((name) => [name, 1] as const),
    );
    await settle();
    expect(entered).toEqual(['a', 'b', 'c', 'd']);
    gate.leave(1);
    await settle();
    expect(entered).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('keeps order: a holder of two units waits for two, and those after it wait behind it', async () => {
    const gate = new Gate(4);
    const entered = admit(gate, [
      ['raw1', 1],
      ['raw2', 1],
      ['raw3', 1],
      ['zstd', 2],
      ['raw4', 1],
    ]);
    await settle();
    // one unit is free, but the compressed object needs two; raw4 may not pass it
    expect(entered).toEqual(['raw1', 'raw2', 'raw3']);
    gate.leave(1);
    await settle();
    expect(entered).toEqual(['raw1', 'raw2', 'raw3', 'zstd']);
    gate.leave(1);
    await settle();
    expect(entered).toEqual(['raw1', 'raw2', 'raw3', 'zstd', 'raw4']);
  });

  it('lets a holder of more units than the limit in alone', async () => {
    const gate = new Gate(1);
    const entered = admit(gate, [
      ['one', 1],
      ['two', 2],
      ['three', 1],
    ]);
    await settle();
    expect(entered).toEqual(['one']);
    gate.leave(1);
    await settle();
    expect(entered).toEqual(['one', 'two']);
    gate.leave(2);
    await settle();
    expect(entered).toEqual(['one', 'two', 'three']);
  });
});
