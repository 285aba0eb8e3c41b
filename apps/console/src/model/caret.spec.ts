import { caretOf } from './caret';

describe('caretOf', () => {
  it.each([
    ['1 +* 2', 3, { line: 1, column: 4, lineText: '1 +* 2', caret: '   ^' }],
    ['$.a +', 5, { line: 1, column: 6, lineText: '$.a +', caret: '     ^' }],
    ['first\n$.b +* 1', 10, { line: 2, column: 5, lineText: '$.b +* 1', caret: '    ^' }],
    ['a\nb', 1, { line: 1, column: 2, lineText: 'a', caret: ' ^' }],
    ['', 0, { line: 1, column: 1, lineText: '', caret: '^' }],
  ])('%j at %d', (text, position, expected) => expect(caretOf(text, position)).toEqual(expected));
});
