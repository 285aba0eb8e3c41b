import { PolicySyntaxError, parseLegacyRule, parseRule } from './rule';

describe('parseRule', () => {
  it.each<[string, unknown]>([
    ['', { kind: 'true' }],
    ['@', { kind: 'true' }],
    ['!', { kind: 'false' }],
    ['role:admin', { kind: 'role', match: 'admin' }],
    ['rule:admin_api', { kind: 'rule', name: 'admin_api' }],
    ['project_id:%(project_id)s', { kind: 'generic', key: 'project_id', match: '%(project_id)s' }],
    [
      'role:a or role:b',
      {
        kind: 'or',
        items: [
          { kind: 'role', match: 'a' },
          { kind: 'role', match: 'b' },
        ],
      },
    ],
    [
      'role:a or role:b and role:c',
      {
        kind: 'or',
        items: [
          { kind: 'role', match: 'a' },
          {
            kind: 'and',
            items: [
              { kind: 'role', match: 'b' },
              { kind: 'role', match: 'c' },
            ],
          },
        ],
      },
    ],
    [
      '(role:a or role:b) and not role:c',
      {
        kind: 'and',
        items: [
          {
            kind: 'or',
            items: [
              { kind: 'role', match: 'a' },
              { kind: 'role', match: 'b' },
            ],
          },
          { kind: 'not', item: { kind: 'role', match: 'c' } },
        ],
      },
    ],
    [
      '(role:reader and project_id:%(project_id)s)',
      {
        kind: 'and',
        items: [
          { kind: 'role', match: 'reader' },
          { kind: 'generic', key: 'project_id', match: '%(project_id)s' },
        ],
      },
    ],
    ['((role:a))', { kind: 'role', match: 'a' }],
    ['not not @', { kind: 'not', item: { kind: 'not', item: { kind: 'true' } } }],
    [
      'role:a AND role:b',
      {
        kind: 'and',
        items: [
          { kind: 'role', match: 'a' },
          { kind: 'role', match: 'b' },
        ],
      },
    ],
  ])('%j', (text, tree) => expect(parseRule(text)).toEqual(tree));

  it.each(['role:a or', '(role:a', 'role:a)', 'and role:a', 'admin', 'role:a role:b', 'http://x:y'])(
    'rejects %j naming the rule',
    (text) => {
      expect(() => parseRule(text, 'volume:create')).toThrow(PolicySyntaxError);
      expect(() => parseRule(text, 'volume:create')).toThrow(/volume:create/);
    },
  );
});

describe('parseLegacyRule', () => {
  it('reads alternatives of conjunctions', () => {
    expect(parseLegacyRule([['role:a', 'role:b'], ['role:c']], 'x')).toEqual({
      kind: 'or',
      items: [
        {
          kind: 'and',
          items: [
            { kind: 'role', match: 'a' },
            { kind: 'role', match: 'b' },
          ],
        },
        { kind: 'role', match: 'c' },
      ],
    });
    expect(parseLegacyRule([], 'x')).toEqual({ kind: 'true' });
  });
  it('rejects other shapes', () => {
    expect(() => parseLegacyRule(['role:a'], 'x')).toThrow(PolicySyntaxError);
  });
});
