import { readDocumentRefusal, parserRefusal, readerRefusal } from './pyyaml-refusal';

// Expected texts are Debian python3-yaml 6's str() of its exceptions for the same documents.
describe('readerRefusal', () => {
  it('names the first unreadable character at its code-point position', () => {
    expect(readerRefusal('😀é\x07')?.message).toBe(
      'unacceptable character #x0007: special characters are not allowed\n  in "<unicode string>", position 2',
    );
    expect(readerRefusal('[\x07\t"\\q')?.type).toBe('ReaderError');
    expect(readerRefusal('a\ufffe')?.message).toContain('#xfffe');
    expect(readerRefusal('a: b\n\t- \x85\u2028\ud83d\ude00')).toBeNull();
  });
});

describe('parserRefusal', () => {
  it('names an open flow collection and where it started', () => {
    expect(parserRefusal('[unclosed')).toEqual({
      type: 'ParserError',
      message:
        'while parsing a flow sequence\n  in "<unicode string>", line 1, column 1:\n    [unclosed\n    ^\n' +
        "expected ',' or ']', but got '<stream end>'\n  in \"<unicode string>\", line 1, column 10:\n    [unclosed\n             ^",
    });
    expect(parserRefusal('{a: [b')?.message).toContain(
      'while parsing a flow sequence\n  in "<unicode string>", line 1, column 5:',
    );
    // after a separator the node is what is missing; its mark is the problem's, so it is left out
    expect(parserRefusal('[a,\n')?.message).toBe(
      "while parsing a flow node\nexpected the node content, but found '<stream end>'\n" +
        '  in "<unicode string>", line 2, column 1:\n    \n    ^',
    );
  });

  it('cuts a long quoted line to 32 characters on a side, after 36', () => {
    const message = parserRefusal(`[${'x'.repeat(100)}`)!.message;
    expect(message).toContain(`\n    [${'x'.repeat(31)} ... \n    ^\n`);
    expect(message).toContain(`column 102:\n     ... ${'x'.repeat(32)}\n${' '.repeat(41)}^`);
  });

  it('names a deeper line that cannot continue the value before it', () => {
    expect(parserRefusal('a: &x 1 # c\n  b')?.message).toBe(
      'while parsing a block mapping\n  in "<unicode string>", line 1, column 1:\n    a: &x 1 # c\n    ^\n' +
        'expected <block end>, but found \'<scalar>\'\n  in "<unicode string>", line 2, column 3:\n      b\n      ^',
    );
    expect(parserRefusal('a: "x"\n  b: 2')?.message).toContain("found '<block mapping start>'");
    expect(parserRefusal('- "a"b')?.message).toContain('while parsing a block collection');
    expect(parserRefusal('"a" b')?.message).toBe(
      'expected \'<document start>\', but found \'<scalar>\'\n  in "<unicode string>", line 1, column 5:\n    "a" b\n        ^',
    );
  });

  it('names a quoted scalar left open', () => {
    expect(parserRefusal('a: "b\n')?.message).toBe(
      'while scanning a quoted scalar\n  in "<unicode string>", line 1, column 4:\n    a: "b\n       ^\n' +
        'found unexpected end of stream\n  in "<unicode string>", line 2, column 1:\n    \n    ^',
    );
  });
});

describe('parserRefusal: escapes and keys', () => {
  it('names an unknown or short escape in a double-quoted scalar', () => {
    expect(parserRefusal('"\\q"')?.message).toBe(
      'while scanning a double-quoted scalar\n  in "<unicode string>", line 1, column 1:\n    "\\q"\n    ^\n' +
        'found unknown escape character \'q\'\n  in "<unicode string>", line 1, column 3:\n    "\\q"\n      ^',
    );
    expect(parserRefusal('a: "xy\\x4"')?.message).toContain(
      'expected escape sequence of 2 hexadecimal numbers, but found \'"\'\n  in "<unicode string>", line 1, column 9:',
    );
    expect(parserRefusal('"\\x')?.message).toContain("but found '\\x00'");
  });

  it("names a ':' where no key can start", () => {
    expect(parserRefusal('x: y: z')).toEqual({
      type: 'ScannerError',
      message:
        'mapping values are not allowed here\n  in "<unicode string>", line 1, column 5:\n    x: y: z\n        ^',
    });
    expect(parserRefusal('a: b\n  c: d')?.message).toContain('line 2, column 4:');
  });
});

describe('parserRefusal: block scalar headers and indicators', () => {
  it('names the first character that breaks a block scalar header', () => {
    expect(parserRefusal('a: |0\n')?.message).toBe(
      'while scanning a block scalar\n  in "<unicode string>", line 1, column 4:\n    a: |0\n       ^\n' +
        'expected indentation indicator in the range 1-9, but found 0\n  in "<unicode string>", line 1, column 5:\n    a: |0\n        ^',
    );
    expect(parserRefusal('|22')?.message).toContain(
      "expected chomping or indentation indicators, but found '2'",
    );
    expect(parserRefusal('|-\tx')?.message).toContain(
      "expected chomping or indentation indicators, but found '\\t'",
    );
    expect(parserRefusal('|2 x')?.message).toContain(
      'expected a comment or a line break, but found \'x\'\n  in "<unicode string>", line 1, column 4:',
    );
  });

  it("names a '%' inside a line and a block scalar in a flow collection", () => {
    expect(parserRefusal('a: %x')?.message).toBe(
      "while scanning for the next token\nfound character '%' that cannot start any token\n" +
        '  in "<unicode string>", line 1, column 4:\n    a: %x\n       ^',
    );
    expect(parserRefusal('[a, |0]')?.message).toContain("found character '|' that cannot start any token");
  });

  it("names a ']', '}' or ',' outside a flow collection where a node is due", () => {
    expect(parserRefusal('a: ]')?.message).toBe(
      "while parsing a block node\nexpected the node content, but found ']'\n" +
        '  in "<unicode string>", line 1, column 4:\n    a: ]\n       ^',
    );
    expect(parserRefusal('- ,')?.message).toContain("but found ','");
    expect(parserRefusal('---\n}')?.message).toContain(
      'but found \'}\'\n  in "<unicode string>", line 2, column 1:',
    );
    expect(parserRefusal('k: !a!b x')?.message).toBe(
      "while parsing a node\nfound undefined tag handle '!a!'\n" +
        '  in "<unicode string>", line 1, column 4:\n    k: !a!b x\n       ^',
    );
    expect(parserRefusal('%TAG !a! tag:x,1:\n--- !a!b x\n- y')).toBeNull();
    // after a finished node PyYAML names the enclosing collection instead: not modelled
    expect(parserRefusal('[a]]')).toBeNull();
  });
});

describe('readDocumentRefusal', () => {
  it('refuses a tab between tokens, and reads one in quotes, comments and block scalar text', () => {
    expect(readDocumentRefusal('a: b\tc')?.message).toBe(
      "while scanning for the next token\nfound character '\\t' that cannot start any token\n" +
        '  in "<unicode string>", line 1, column 5:\n    a: b\tc\n        ^',
    );
    expect(readDocumentRefusal('a: 1\n \tb: 2')?.message).toContain('line 2, column 2:');
    expect(readDocumentRefusal('"a\tb" #\tc')).toBeNull();
    expect(readDocumentRefusal('x: |\n  \ta\n')).toBeNull();
  });

  it('refuses a block mapping entry with no key, which the yaml package reads as a null key', () => {
    expect(readDocumentRefusal(': ')?.message).toBe(
      'while parsing a block mapping\nexpected <block end>, but found \':\'\n  in "<unicode string>", line 1, column 1:\n    : \n    ^',
    );
    expect(readDocumentRefusal('a: 1\n: x')?.message).toContain('line 2, column 1:');
  });

  it('reads explicit keys and block scalars, and leaves flow collections to the other checks', () => {
    expect(readDocumentRefusal('? a\n: b')).toBeNull();
    expect(readDocumentRefusal('a: |\n  : x\n')).toBeNull();
    // PyYAML refuses this one too (expected the node content), a flow-context refusal not modelled
    expect(readDocumentRefusal('[a,\n : b]')).toBeNull();
  });
});
