import { UnwritableValueError, executeStatement, sqlLiteral } from './prepared-statements';

/** The literals `EXECUTE` takes: what PostgreSQL reads back is checked by decision-rows.int-spec. */
describe('sqlLiteral', () => {
  it('dollar-quotes text, leaving quotes and backslashes as they are', () => {
    expect(sqlLiteral(`it's a "q" \\ {x}`)).toBe(`$osc$it's a "q" \\ {x}$osc$`);
    expect(sqlLiteral('')).toBe('$osc$$osc$');
  });

  it("falls back to a quoted literal when the text holds the tag's start", () => {
    expect(sqlLiteral("a $osc$ b's")).toBe(`'a $osc$ b''s'`);
    expect(sqlLiteral('$osc\\')).toBe(`E'$osc\\\\'`);
  });

  it('writes NULL, numbers, booleans, dates and objects as PostgreSQL reads them', () => {
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(undefined)).toBe('NULL');
    expect(sqlLiteral(42)).toBe('$osc$42$osc$');
    expect(sqlLiteral(false)).toBe('$osc$false$osc$');
    expect(sqlLiteral(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('$osc$2026-01-02T03:04:05.006Z$osc$');
    expect(sqlLiteral({ a: [1] })).toBe('$osc${"a":[1]}$osc$');
  });

  it('writes an array as one array literal, its elements quoted, NULL bare', () => {
    expect(sqlLiteral(['a', null, 'b c', ''])).toBe('$osc${"a",NULL,"b c",""}$osc$');
    expect(sqlLiteral(['{"k":"v\\\\n"}'])).toBe('$osc${"{\\"k\\":\\"v\\\\\\\\n\\"}"}$osc$');
    expect(sqlLiteral([1, true])).toBe('$osc${"1","true"}$osc$');
    expect(sqlLiteral([])).toBe('$osc${}$osc$');
  });

  it('refuses what it cannot write, so that the caller binds the value instead', () => {
    expect(() => sqlLiteral([['nested']])).toThrow(UnwritableValueError);
    expect(() => sqlLiteral(Buffer.from('x'))).toThrow(UnwritableValueError);
    expect(() => sqlLiteral(Symbol('s'))).toThrow(UnwritableValueError);
  });

  it('makes the EXECUTE of a prepared statement', () => {
    expect(executeStatement('osc_x', [])).toBe('EXECUTE osc_x');
    expect(executeStatement('osc_x', ['a', null, ['b']])).toBe(
      'EXECUTE osc_x($osc$a$osc$, NULL, $osc${"b"}$osc$)',
    );
  });
});
