import { asciiOnly } from '../build/bundle';

describe('asciiOnly', () => {
  it('leaves a program that means the same, in ASCII only', () => {
    const code =
      "// a comment — with a dash\nmodule.exports = { s: 'é—😀', r: /^[\u009b—😀]+$/u.test('—😀'), n: /x[\u009b]/.test('x\u009b') };";
    const out = asciiOnly(code);
    expect(/^[\x20-\x7e\n]*$/.test(out)).toBe(true);
    const run = (src: string) => {
      const m = { exports: {} as unknown };
      new Function('module', src)(m);
      return m.exports;
    };
    expect(run(out)).toEqual(run(code));
  });
});
