import { isConnectionRefusal, retryConnectionRefusals } from './connection-refusals';

const pgError = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isConnectionRefusal', () => {
  it('knows the refusals raised before any statement ran', () => {
    expect(isConnectionRefusal(pgError('53300', 'sorry, too many clients already'))).toBe(true);
    expect(isConnectionRefusal(pgError('57P03', 'the database system is starting up'))).toBe(true);
    expect(isConnectionRefusal(pgError('ECONNREFUSED'))).toBe(true);
    expect(
      isConnectionRefusal(Object.assign(new Error('query failed'), { driverError: pgError('08001') })),
    ).toBe(true);
  });

  it('leaves alone what may have committed or is not the connection', () => {
    expect(isConnectionRefusal(pgError('ECONNRESET'))).toBe(false);
    expect(isConnectionRefusal(pgError('08006', 'connection failure'))).toBe(false);
    expect(isConnectionRefusal(pgError('23505'))).toBe(false);
    expect(isConnectionRefusal(new Error('plain'))).toBe(false);
    expect(isConnectionRefusal(null)).toBe(false);
  });
});

describe('retryConnectionRefusals', () => {
  const waited: number[] = [];
  const wait = async (ms: number) => void waited.push(ms);
  beforeEach(() => (waited.length = 0));

  it('runs again after each refusal and returns the first success', async () => {
    let calls = 0;
    const fn = async () => {
      calls += 1;
      if (calls < 3) throw pgError('53300', 'sorry, too many clients already');
      return 'claimed';
    };
    await expect(retryConnectionRefusals(fn, [10, 20, 40], wait)).resolves.toBe('claimed');
    expect(calls).toBe(3);
    expect(waited).toEqual([10, 20]);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    const fn = async () => {
      calls += 1;
      throw pgError('ECONNRESET');
    };
    await expect(retryConnectionRefusals(fn, [10, 20], wait)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(calls).toBe(1);
    expect(waited).toEqual([]);
  });

  it('gives up with the refusal after the last delay', async () => {
    let calls = 0;
    const fn = async () => {
      calls += 1;
      throw pgError('53300', 'sorry, too many clients already');
    };
    await expect(retryConnectionRefusals(fn, [10, 20], wait)).rejects.toThrow('too many clients');
    expect(calls).toBe(3);
    expect(waited).toEqual([10, 20]);
  });
});
