import { Gate } from './backup-reader';

/** Lets every settled promise's continuations run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('Gate (the units a restore holds in flight)', () => {
  it('admits holders up to its limit and the next one when units are left', async () => {
    const gate = new Gate(4);
    const entered: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) void gate.enter(1).then(() => entered.push(name));
    await settle();
    expect(entered).toEqual(['a', 'b', 'c', 'd']);
    gate.leave(1);
    await settle();
    expect(entered).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('keeps order: a holder of two units waits for two, and those after it wait behind it', async () => {
    const gate = new Gate(4);
    const entered: string[] = [];
    for (const [name, units] of [
      ['raw1', 1],
      ['raw2', 1],
      ['raw3', 1],
      ['zstd', 2],
      ['raw4', 1],
    ] as const)
      void gate.enter(units).then(() => entered.push(name));
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
    const entered: string[] = [];
    void gate.enter(1).then(() => entered.push('one'));
    void gate.enter(2).then(() => entered.push('two'));
    void gate.enter(1).then(() => entered.push('three'));
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
