import { parseWorkflows, type DslIssueKind } from '../src';
import { issuesOf, tasks, wf, y } from './dsl-test-support';

/**
 * Invalid workflow-list documents. Each row: title, document, the path of the first issue, a fragment of
 * its message, and its kind. Paths are logical: `workflows.<name>...`.
 */
type Row = [title: string, text: string, path: string, message: string, kind?: DslIssueKind];

const T1 = 't1:\n  action: std.noop\n';

const rows: Row[] = [
  // --- YAML syntax -------------------------------------------------------------------------------------
  ['unclosed flow sequence', "version: '2.0'\nwf: [1, 2\n", '', 'Flow sequence', 'syntax'],
  [
    'bad indentation',
    "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: x\n     bad: 1\n",
    '',
    '',
    'syntax',
  ],
  ['tab indentation', "version: '2.0'\nwf:\n\ttasks: {}\n", '', '', 'syntax'],
  [
    'unknown tag',
    "version: '2.0'\nwf: !foo {}\n",
    '',
    "could not determine a constructor for the tag '!foo'",
    'syntax',
  ],
  [
    'lone = scalar (PyYAML value tag)',
    "version: '2.0'\nwf:\n  vars:\n    x: =\n",
    '',
    'tag:yaml.org,2002:value',
    'syntax',
  ],
  ['several documents', "version: '2.0'\n---\nwf: {}\n", '', '', 'syntax'],
  [
    'backtick starts a plain scalar',
    "version: '2.0'\nwf:\n  description: `x`\n",
    '',
    'reserved character',
    'syntax',
  ],
  ['unterminated quoted string', "version: '2.0'\nwf:\n  description: \"abc\n", '', '', 'syntax'],
  [
    'alias expansion bomb',
    `version: '2.0'\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
    '',
    'alias',
    'syntax',
  ],
  // --- version ------------------------------------------------------------------------------------------
  ['version 3.0', `version: '3.0'\nwf:\n  tasks:\n    t1: {action: std.noop}\n`, 'version', '3.0', 'version'],
  ['version 1 (int)', 'version: 1\nwf:\n  tasks:\n    t1: {action: std.noop}\n', 'version', '1', 'version'],
  [
    'version not a number',
    'version: abc\nwf:\n  tasks:\n    t1: {action: std.noop}\n',
    'version',
    'abc',
    'version',
  ],
  ['version null', 'version:\nwf:\n  tasks:\n    t1: {action: std.noop}\n', 'version', 'None', 'version'],
  [
    'version boolean',
    'version: yes\nwf:\n  tasks:\n    t1: {action: std.noop}\n',
    'version',
    'True',
    'version',
  ],
  [
    'version 2.0.0',
    "version: '2.0.0'\nwf:\n  tasks:\n    t1: {action: std.noop}\n",
    'version',
    '2.0.0',
    'version',
  ],
  [
    'version missing',
    'wf:\n  tasks:\n    t1: {action: std.noop}\n',
    '',
    "'version' is a required property",
    'schema',
  ],
  // --- top level ----------------------------------------------------------------------------------------
  ['document is a list', '- a\n- b\n', '', "is not of type 'object'", 'schema'],
  ['empty document', '', '', "'version' is a required property", 'schema'],
  ['no workflow in the list', "version: '2.0'\n", '', 'At least one item', 'schema'],
  [
    'workflow is a string',
    "version: '2.0'\nwf: hello\n",
    'workflows.wf',
    "'hello' is not of type 'object'",
    'schema',
  ],
  [
    'workflow is an empty map',
    "version: '2.0'\nwf: {}\n",
    'workflows.wf',
    'does not have enough properties',
    'schema',
  ],
  ['workflow is null', "version: '2.0'\nwf:\n", 'workflows.wf', "None is not of type 'object'", 'schema'],
  [
    'workflow name with a space',
    "version: '2.0'\nmy wf:\n  tasks:\n    t1: {action: std.noop}\n",
    'workflows.my wf',
    'must not contain spaces',
    'semantic',
  ],
  [
    'workflow name shaped like a UUID',
    "version: '2.0'\n123e4567-e89b-12d3-a456-426655440000:\n  tasks:\n    t1: {action: std.noop}\n",
    'workflows.123e4567-e89b-12d3-a456-426655440000',
    'Workflow name cannot be in the format of UUID.',
    'semantic',
  ],
  [
    'workflow name read as boolean',
    "version: '2.0'\nyes:\n  tasks:\n    t1: {action: std.noop}\n",
    'workflows.true',
    'boolean',
    'schema',
  ],
  // --- workflow keys ------------------------------------------------------------------------------------
  ['unknown workflow key', wf(`taks:\n  t1: {}\n`), 'workflows.wf.taks', "('taks' was unexpected)", 'schema'],
  ['tasks missing', wf(`description: d\n`), 'workflows.wf', "'tasks' is a required property", 'schema'],
  ['tasks empty', wf(`tasks: {}\n`), 'workflows.wf.tasks', "Workflow doesn't have any tasks", 'schema'],
  ['tasks null', wf(`tasks:\n`), 'workflows.wf.tasks', "Workflow doesn't have any tasks", 'schema'],
  ['tasks is a list', wf(`tasks: [t1]\n`), 'workflows.wf.tasks', "is not of type 'object'", 'schema'],
  [
    'unknown type',
    wf(`type: sideways\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.type',
    "is not one of ['reverse', 'direct']",
    'schema',
  ],
  [
    'description not a string',
    wf(`description: 5\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.description',
    "5 is not of type 'string'",
  ],
  [
    'description empty',
    wf(`description: ''\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.description',
    "'' is too short",
  ],
  [
    'tags not unique',
    wf(`tags: [a, a]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.tags',
    'has non-unique elements',
  ],
  [
    'tags is a string',
    wf(`tags: a\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.tags',
    "is not of type 'array'",
  ],
  ['tags empty', wf(`tags: []\ntasks:\n  t1: {action: std.noop}\n`), 'workflows.wf.tags', '[] is too short'],
  [
    'tag not a string',
    wf(`tags: [1]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.tags[0]',
    "1 is not of type 'string'",
  ],
  [
    'input is a string',
    wf(`input: a\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input',
    "is not of type 'array'",
  ],
  [
    'input empty',
    wf(`input: []\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input',
    '[] is too short',
  ],
  [
    'input duplicate names',
    wf(`input: [a, {a: 1}]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input[1]',
    "duplicate input parameter 'a'",
  ],
  [
    'input entry with two keys',
    wf(`input: [{a: 1, b: 2}]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input[0]',
    'exactly one key',
  ],
  [
    'input key not a word',
    wf(`input: [{a b: 1}]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input[0].a b',
    "does not match '^\\w+$'",
  ],
  [
    'input entry a number',
    wf(`input: [5]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input[0]',
    'input entry must be a name',
  ],
  [
    'input entry empty name',
    wf(`input: ['']\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.input[0]',
    "'' is too short",
  ],
  [
    'output is a list',
    wf(`output: [a]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.output',
    "is not of type 'object'",
  ],
  [
    'output empty',
    wf(`output: {}\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.output',
    'does not have enough properties',
  ],
  [
    'vars key with a dash',
    wf(`vars:\n  a-b: 1\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.a-b',
    "does not match '^\\w+$'",
  ],
  [
    'output-on-error scalar',
    wf(`output-on-error: 1\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.output-on-error',
    "1 is not of type 'object'",
  ],
  [
    'output expression unbalanced',
    wf(`output:\n  x: <% $.x( %>\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.output.x',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'nested output expression',
    wf(`output:\n  x:\n    y: [<% $.a %>, "<% $.b[ %>"]\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.output.x.y[1]',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'vars mixing languages',
    wf(`vars:\n  x: <% 1 %> {{ 2 }}\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'The line already contains an expression of type YAQL',
    'expression',
  ],
  [
    'empty yaql expression',
    wf(`vars:\n  x: <% %>\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'jinja filter without a name',
    wf(`vars:\n  x: "{{ _.a | }}"\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'Invalid Jinja expression',
    'expression',
  ],
  [
    'unterminated string in yaql',
    wf(`vars:\n  x: <% 'abc %>\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'yaql expression ending with an operator',
    wf(`vars:\n  x: <% $.a + %>\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'jinja block not closed',
    wf(`vars:\n  x: "{% if _.a %}yes"\ntasks:\n  t1: {action: std.noop}\n`),
    'workflows.wf.vars.x',
    'Invalid Jinja expression',
    'expression',
  ],
  // --- task schema --------------------------------------------------------------------------------------
  [
    'task name with a dash',
    tasks(`bad-name:\n  action: std.noop\n`),
    'workflows.wf.tasks.bad-name',
    "does not match '^\\w+$'",
  ],
  [
    'task name too long',
    tasks(`${'t'.repeat(256)}:\n  action: std.noop\n`),
    `workflows.wf.tasks.${'t'.repeat(256)}`,
    'must not exceed 255',
  ],
  ['task name read as boolean', tasks(`on:\n  action: std.noop\n`), 'workflows.wf.tasks.true', 'boolean'],
  [
    'task is a string',
    tasks(`t1: std.noop\n`),
    'workflows.wf.tasks.t1',
    "'std.noop' is not of type 'object'",
  ],
  ['task is empty', tasks(`t1: {}\n`), 'workflows.wf.tasks.t1', 'does not have enough properties'],
  ['task is null', tasks(`t1:\n`), 'workflows.wf.tasks.t1', "None is not of type 'object'"],
  [
    'unknown task key',
    tasks(`t1:\n  acton: std.noop\n`),
    'workflows.wf.tasks.t1.acton',
    "('acton' was unexpected)",
  ],
  [
    'action and workflow',
    tasks(`t1:\n  action: std.noop\n  workflow: other\n`),
    'workflows.wf.tasks.t1',
    'mutually exclusive',
  ],
  ['action empty', tasks(`t1:\n  action: ''\n`), 'workflows.wf.tasks.t1.action', "'' is too short"],
  [
    'action a number',
    tasks(`t1:\n  action: 5\n`),
    'workflows.wf.tasks.t1.action',
    "5 is not of type 'string'",
  ],
  [
    'workflow a list',
    tasks(`t1:\n  workflow: [a]\n`),
    'workflows.wf.tasks.t1.workflow',
    "is not of type 'string'",
  ],
  [
    'action not a command',
    tasks(`t1:\n  action: =x y\n`),
    'workflows.wf.tasks.t1.action',
    'Invalid action/workflow task property: =x y',
  ],
  [
    'inline parameter expression',
    tasks(`t1:\n  action: std.echo output=<% $.x[ %>\n`),
    'workflows.wf.tasks.t1.action.output',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'input a number',
    tasks(`t1:\n  input: 5\n`),
    'workflows.wf.tasks.t1.input',
    'not valid under any of the given schemas',
  ],
  ['input empty string', tasks(`t1:\n  input: ''\n`), 'workflows.wf.tasks.t1.input', "'' is too short"],
  [
    'input key with a space',
    tasks(`t1:\n  input:\n    a b: 1\n`),
    'workflows.wf.tasks.t1.input.a b',
    "does not match '^\\w+$'",
  ],
  [
    'expression input with inline params',
    tasks(`t1:\n  action: std.echo output=1\n  input: <% $.params %>\n`),
    'workflows.wf.tasks.t1.input',
    'cannot be combined with inline parameters',
  ],
  [
    'input value expression',
    tasks(`t1:\n  input:\n    a: "{{ x ( }}"\n`),
    'workflows.wf.tasks.t1.input.a',
    'Invalid Jinja expression',
    'expression',
  ],
  [
    'publish a list',
    tasks(`t1:\n  publish: [a]\n`),
    'workflows.wf.tasks.t1.publish',
    "is not of type 'object'",
  ],
  [
    'publish empty',
    tasks(`t1:\n  publish: {}\n`),
    'workflows.wf.tasks.t1.publish',
    'does not have enough properties',
  ],
  [
    'publish-on-error a string',
    tasks(`t1:\n  publish-on-error: x\n`),
    'workflows.wf.tasks.t1.publish-on-error',
    "'x' is not of type 'object'",
  ],
  [
    'publish-on-skip bad key',
    tasks(`t1:\n  publish-on-skip:\n    a.b: 1\n`),
    'workflows.wf.tasks.t1.publish-on-skip.a.b',
    'does not match',
  ],
  [
    'publish expression',
    tasks(`t1:\n  publish:\n    a: <% task().result.( %>\n`),
    'workflows.wf.tasks.t1.publish.a',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'with-items a number',
    tasks(`t1:\n  with-items: 5\n`),
    'workflows.wf.tasks.t1.with-items',
    'not valid under any of the given schemas',
  ],
  [
    'with-items wrong format',
    tasks(`t1:\n  with-items: x of [1]\n`),
    'workflows.wf.tasks.t1.with-items',
    "Wrong format of 'with-items'",
  ],
  [
    'with-items unclosed list',
    tasks(`t1:\n  with-items: x in [1, 2\n`),
    'workflows.wf.tasks.t1.with-items',
    "Wrong format of 'with-items'",
  ],
  [
    'with-items invalid JSON',
    tasks(`t1:\n  with-items: x in [1, }]\n`),
    'workflows.wf.tasks.t1.with-items',
    "Invalid array in 'with-items' clause",
  ],
  [
    'with-items not unique',
    tasks(`t1:\n  with-items:\n    - a in [1]\n    - a in [1]\n`),
    'workflows.wf.tasks.t1.with-items',
    'non-unique',
  ],
  [
    'with-items empty list',
    tasks(`t1:\n  with-items: []\n`),
    'workflows.wf.tasks.t1.with-items',
    '[] is too short',
  ],
  [
    'with-items item a number',
    tasks(`t1:\n  with-items: [5]\n`),
    'workflows.wf.tasks.t1.with-items[0]',
    "5 is not of type 'string'",
  ],
  [
    'with-items second item wrong',
    tasks(`t1:\n  with-items:\n    - a in [1]\n    - b from [2]\n`),
    'workflows.wf.tasks.t1.with-items[1]',
    "Wrong format of 'with-items'",
  ],
  [
    'with-items expression',
    tasks(`t1:\n  with-items: x in <% $.( %>\n`),
    'workflows.wf.tasks.t1.with-items',
    'Invalid YAQL expression',
    'expression',
  ],
  // --- policies -------------------------------------------------------------------------------------------
  [
    'retry without count',
    tasks(`t1:\n  retry:\n    delay: 1\n`),
    'workflows.wf.tasks.t1.retry',
    "'count' is a required property",
  ],
  [
    'retry without delay',
    tasks(`t1:\n  retry:\n    count: 1\n`),
    'workflows.wf.tasks.t1.retry',
    "'delay' is a required property",
  ],
  [
    'retry unknown key',
    tasks(`t1:\n  retry:\n    count: 1\n    delay: 1\n    cnt: 2\n`),
    'workflows.wf.tasks.t1.retry.cnt',
    "('cnt' was unexpected)",
  ],
  [
    'retry negative count',
    tasks(`t1:\n  retry:\n    count: -1\n    delay: 1\n`),
    'workflows.wf.tasks.t1.retry.count',
    'less than the minimum of 0',
  ],
  [
    'retry count text',
    tasks(`t1:\n  retry:\n    count: many\n    delay: 1\n`),
    'workflows.wf.tasks.t1.retry.count',
    'not valid under any',
  ],
  [
    'retry break-on not an expression',
    tasks(`t1:\n  retry:\n    count: 1\n    delay: 1\n    break-on: true\n`),
    'workflows.wf.tasks.t1.retry.break-on',
    'not valid under any',
  ],
  [
    'retry continue-on bad expression',
    tasks(`t1:\n  retry:\n    count: 1\n    delay: 1\n    continue-on: <% $.( %>\n`),
    'workflows.wf.tasks.t1.retry.continue-on',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'retry one-line without delay',
    tasks(`t1:\n  retry: count=3 break-on=<% $.x %>\n`),
    'workflows.wf.tasks.t1.retry',
    "'delay' is a required property",
  ],
  ['retry a number', tasks(`t1:\n  retry: 5\n`), 'workflows.wf.tasks.t1.retry', 'not valid under any'],
  ['retry empty string', tasks(`t1:\n  retry: ''\n`), 'workflows.wf.tasks.t1.retry', "'' is too short"],
  [
    'wait-before negative',
    tasks(`t1:\n  wait-before: -1\n`),
    'workflows.wf.tasks.t1.wait-before',
    'less than the minimum of 0',
  ],
  [
    'wait-before float',
    tasks(`t1:\n  wait-before: 1.5\n`),
    'workflows.wf.tasks.t1.wait-before',
    'not valid under any',
  ],
  [
    'wait-after text',
    tasks(`t1:\n  wait-after: soon\n`),
    'workflows.wf.tasks.t1.wait-after',
    'not valid under any',
  ],
  [
    'timeout boolean',
    tasks(`t1:\n  timeout: true\n`),
    'workflows.wf.tasks.t1.timeout',
    'not valid under any',
  ],
  [
    'concurrency a list',
    tasks(`t1:\n  concurrency: [1]\n`),
    'workflows.wf.tasks.t1.concurrency',
    'not valid under any',
  ],
  [
    'pause-before a number',
    tasks(`t1:\n  pause-before: 1\n`),
    'workflows.wf.tasks.t1.pause-before',
    'not valid under any',
  ],
  [
    'fail-on text',
    tasks(`t1:\n  fail-on: yes please\n`),
    'workflows.wf.tasks.t1.fail-on',
    'not valid under any',
  ],
  [
    'keep-result text',
    tasks(`t1:\n  keep-result: nope\n`),
    'workflows.wf.tasks.t1.keep-result',
    'not valid under any',
  ],
  [
    'safe-rerun a number',
    tasks(`t1:\n  safe-rerun: 2\n`),
    'workflows.wf.tasks.t1.safe-rerun',
    'not valid under any',
  ],
  [
    'timeout expression',
    tasks(`t1:\n  timeout: <% ($.t %>\n`),
    'workflows.wf.tasks.t1.timeout',
    'Invalid YAQL expression',
    'expression',
  ],
  ['target empty', tasks(`t1:\n  target: ''\n`), 'workflows.wf.tasks.t1.target', "'' is too short"],
  [
    'target a number',
    tasks(`t1:\n  target: 5\n`),
    'workflows.wf.tasks.t1.target',
    "5 is not of type 'string'",
  ],
  [
    'task description a list',
    tasks(`t1:\n  description: []\n`),
    'workflows.wf.tasks.t1.description',
    "[] is not of type 'string'",
  ],
  ['task tags not unique', tasks(`t1:\n  tags: [x, x]\n`), 'workflows.wf.tasks.t1.tags', 'non-unique'],
  // --- join and requires misuse ---------------------------------------------------------------------------
  [
    'join text',
    tasks(`t0:\n  on-success: t1\nt1:\n  join: some\n`),
    'workflows.wf.tasks.t1.join',
    "expected 'all', 'one' or a non-negative integer",
  ],
  [
    'join negative',
    tasks(`t0:\n  on-success: t1\nt1:\n  join: -1\n`),
    'workflows.wf.tasks.t1.join',
    'not valid under any',
  ],
  [
    'join in a reverse workflow',
    wf(`type: reverse\ntasks:\n  t1:\n    join: all\n`),
    'workflows.wf.tasks.t1.join',
    "('join' is only allowed in direct workflows)",
  ],
  [
    'on-success in a reverse workflow',
    wf(`type: reverse\ntasks:\n  t1:\n    on-success: t2\n  t2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-success',
    "('on-success' is only allowed in direct workflows)",
  ],
  [
    'requires in a direct workflow',
    tasks(`t1:\n  requires: t2\nt2:\n  action: std.noop\n`),
    'workflows.wf.tasks.t1.requires',
    "('requires' is only allowed in reverse workflows)",
  ],
  [
    'requires a number',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: 5\n`),
    'workflows.wf.tasks.t1.requires',
    'not valid under any',
  ],
  [
    'requires not unique',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: [t2, t2]\n  t2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.requires',
    'non-unique',
  ],
  [
    'requires empty',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: ''\n`),
    'workflows.wf.tasks.t1.requires',
    "'' is too short",
  ],
  // --- transition clauses ---------------------------------------------------------------------------------
  [
    'on-success a number',
    tasks(`t1:\n  on-success: 5\n`),
    'workflows.wf.tasks.t1.on-success',
    'transition must be a task name',
  ],
  [
    'on-success two words',
    tasks(`t1:\n  on-success: t2 t3\n`),
    'workflows.wf.tasks.t1.on-success',
    "'t2 t3' is not a valid transition target",
  ],
  [
    'on-success empty list',
    tasks(`t1:\n  on-success: []\n`),
    'workflows.wf.tasks.t1.on-success',
    '[] is too short',
  ],
  [
    'on-success duplicate item',
    tasks(`t1:\n  on-success: [t2, t2]\nt2:\n  action: std.noop\n`),
    'workflows.wf.tasks.t1.on-success[1]',
    'listed twice',
  ],
  [
    'condition not an expression',
    tasks(`t1:\n  on-success:\n    - t2: always\nt2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-success[0].t2',
    'not valid under any',
  ],
  [
    'condition map with two keys',
    tasks(`t1:\n  on-success:\n    - t2: <% true %>\n      t3: <% true %>\n`),
    'workflows.wf.tasks.t1.on-success[0]',
    'exactly one key',
  ],
  [
    'clause empty map',
    tasks(`t1:\n  on-error: {}\n`),
    'workflows.wf.tasks.t1.on-error',
    'does not have enough properties',
  ],
  ['clause null', tasks(`t1:\n  on-complete:\n`), 'workflows.wf.tasks.t1.on-complete', 'None is not valid'],
  [
    'advanced publish empty branch',
    tasks(`t1:\n  on-success:\n    publish:\n      branch: {}\n`),
    'workflows.wf.tasks.t1.on-success.publish.branch',
    'does not have enough properties',
  ],
  [
    'advanced publish unknown scope',
    tasks(`t1:\n  on-success:\n    publish:\n      local:\n        a: 1\n`),
    'workflows.wf.tasks.t1.on-success.publish.local',
    "('local' was unexpected)",
  ],
  [
    'advanced publish without scope',
    tasks(`t1:\n  on-success:\n    publish: {}\n    next: t2\nt2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-success.publish',
    "Either 'branch', 'global' or 'atomic' must be specified",
    'semantic',
  ],
  [
    'advanced next empty list',
    tasks(`t1:\n  on-success:\n    next: []\n`),
    'workflows.wf.tasks.t1.on-success.next',
    '[] is too short',
  ],
  [
    'advanced publish a list',
    tasks(`t1:\n  on-success:\n    publish: [1]\n`),
    'workflows.wf.tasks.t1.on-success.publish',
    "is not of type 'object'",
  ],
  [
    'advanced global publish expression',
    tasks(`t1:\n  on-success:\n    publish:\n      global:\n        x: <% $.( %>\n`),
    'workflows.wf.tasks.t1.on-success.publish.global.x',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'condition expression unbalanced',
    tasks(`t1:\n  on-success:\n    - t2: <% $.x = ( %>\nt2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-success[0].t2',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'fail message expression',
    tasks(`t1:\n  on-error: fail msg=<% $.( %>\n`),
    'workflows.wf.tasks.t1.on-error.msg',
    'Invalid YAQL expression',
    'expression',
  ],
  // --- semantics ------------------------------------------------------------------------------------------
  [
    'transition to an undefined task',
    tasks(`t1:\n  on-success: t9\n`),
    'workflows.wf.tasks.t1.on-success',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'undefined task in a list',
    tasks(`t1:\n  on-success: [t2, t9]\nt2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-success[1]',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'undefined task in advanced next',
    tasks(`t1:\n  on-success:\n    next: t9\n`),
    'workflows.wf.tasks.t1.on-success.next',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'undefined task in advanced next list',
    tasks(`t1:\n  on-complete:\n    next: [t2, {t9: <% true %>}]\nt2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.on-complete.next[1]',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'undefined task on-error',
    tasks(`t1:\n  on-error: nope\n`),
    'workflows.wf.tasks.t1.on-error',
    "Task 'nope' not found.",
    'semantic',
  ],
  [
    'undefined task on-skip',
    tasks(`t1:\n  on-skip: [nope]\n`),
    'workflows.wf.tasks.t1.on-skip[0]',
    "Task 'nope' not found.",
    'semantic',
  ],
  [
    'undefined task with a condition',
    tasks(`t1:\n  on-complete:\n    - nope: <% $.x %>\n`),
    'workflows.wf.tasks.t1.on-complete[0]',
    "Task 'nope' not found.",
    'semantic',
  ],
  [
    'function form without spaces names a task',
    tasks(`t1:\n  on-error: notify(msg="x")\n`),
    'workflows.wf.tasks.t1.on-error',
    "Task 'notify' not found.",
    'semantic',
  ],
  [
    'undefined task in task-defaults',
    tasks(`t1:\n  action: std.noop\n`, 'task-defaults:\n  on-error: handler\n'),
    'workflows.wf.task-defaults.on-error',
    "Task 'handler' not found.",
    'semantic',
  ],
  [
    'no start task',
    tasks(`t1:\n  on-success: t2\nt2:\n  on-success: t1\n`),
    'workflows.wf.tasks',
    'Failed to find start tasks in direct workflow.',
    'semantic',
  ],
  [
    'join all without inbound',
    tasks(`j:\n  join: all\n`),
    'workflows.wf.tasks.j.join',
    "No inbound tasks for task with 'join: all' [task_name=j]",
    'semantic',
  ],
  [
    'join count above inbound',
    tasks(`a:\n  on-success: j\nb:\n  on-success: j\nj:\n  join: 3\n`),
    'workflows.wf.tasks.j.join',
    "Not enough inbound tasks for task with 'join' [task_name=j, join=3, inbound_tasks=2]",
    'semantic',
  ],
  [
    'join one without inbound',
    tasks(`a:\n  action: std.noop\nj:\n  join: one\n`),
    'workflows.wf.tasks.j.join',
    'join=1, inbound_tasks=0',
    'semantic',
  ],
  [
    'join task name too long',
    tasks(`a:\n  on-success: ${'j'.repeat(209)}\n${'j'.repeat(209)}:\n  join: all\n`),
    `workflows.wf.tasks.${'j'.repeat(209)}`,
    'join task name must not exceed 208',
  ],
  [
    'reverse requires an undefined task',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: t9\n`),
    'workflows.wf.tasks.t1.requires',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'reverse tasks that require each other in a cycle',
    wf(
      `type: reverse\ntasks:\n  t0: {action: std.noop}\n  t1:\n    requires: [t0, t2]\n  t2:\n    requires: t3\n  t3:\n    requires: [t1]\n`,
    ),
    'workflows.wf.tasks.t1.requires',
    'Tasks require each other in a cycle: t1 -> t2 -> t3 -> t1',
    'semantic',
  ],
  [
    'reverse requires list with an undefined task',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: [t2, t9]\n  t2: {action: std.noop}\n`),
    'workflows.wf.tasks.t1.requires[1]',
    "Task 't9' not found.",
    'semantic',
  ],
  [
    'reverse requires an engine command',
    wf(`type: reverse\ntasks:\n  t1:\n    requires: fail\n`),
    'workflows.wf.tasks.t1.requires',
    "Task 'fail' not found.",
    'semantic',
  ],
  [
    'reverse task-defaults requires an undefined task',
    wf(`type: reverse\ntask-defaults:\n  requires: [t9]\ntasks:\n  t1:\n    action: std.noop\n`),
    'workflows.wf.task-defaults.requires[0]',
    "Task 't9' not found.",
    'semantic',
  ],
  // --- task-defaults ---------------------------------------------------------------------------------------
  [
    'task-defaults unknown key',
    tasks(T1, 'task-defaults:\n  action: std.echo\n'),
    'workflows.wf.task-defaults.action',
    "('action' was unexpected)",
  ],
  [
    'task-defaults a list',
    tasks(T1, 'task-defaults: [retry]\n'),
    'workflows.wf.task-defaults',
    "is not of type 'object'",
  ],
  [
    'task-defaults retry invalid',
    tasks(T1, 'task-defaults:\n  retry: {count: 1}\n'),
    'workflows.wf.task-defaults.retry',
    "'delay' is a required property",
  ],
  [
    'task-defaults safe-rerun text',
    tasks(T1, 'task-defaults:\n  safe-rerun: maybe\n'),
    'workflows.wf.task-defaults.safe-rerun',
    'not valid under any',
  ],
  [
    'task-defaults empty',
    tasks(T1, 'task-defaults: {}\n'),
    'workflows.wf.task-defaults',
    'does not have enough properties',
  ],
  // --- second workflow of a list --------------------------------------------------------------------------
  [
    'error in the second workflow',
    y`
      version: '2.0'
      good:
        tasks:
          t1: {action: std.noop}
      bad:
        tasks:
          t1:
            on-success: t2
    `,
    'workflows.bad.tasks.t1.on-success',
    "Task 't2' not found.",
    'semantic',
  ],
];

describe('parseWorkflows rejects invalid documents', () => {
  const table = rows.map(
    ([title, text, path, message, kind]) => [title, text, path, message, kind ?? 'schema'] as const,
  );
  it.each(table)('%s', (_title, text, path, message, kind) => {
    const issues = issuesOf(() => parseWorkflows(text));
    const first = issues[0]!;
    expect(first.path).toBe(path);
    expect(first.message).toContain(message);
    expect(first.kind).toBe(kind);
  });
});

describe('error positions and messages', () => {
  it('gives line and column of an unknown key', () => {
    const [issue] = issuesOf(() =>
      parseWorkflows("version: '2.0'\nwf:\n  tasks:\n    t1:\n      acton: x\n"),
    );
    expect(issue).toMatchObject({ line: 5, column: 7 });
  });

  it('gives line and column of a YAML syntax error', () => {
    const [issue] = issuesOf(() => parseWorkflows("version: '2.0'\nwf:\n  tasks: [a, b\n  x: 1\n"));
    expect(issue!.kind).toBe('syntax');
    expect(issue!.line).toBeGreaterThanOrEqual(3);
    expect(issue!.column).toBeGreaterThanOrEqual(1);
  });

  it('points at the transition item of an undefined target', () => {
    const text = tasks(`t1:\n  on-success:\n    - t2\n    - t9\nt2: {action: std.noop}\n`);
    const [issue] = issuesOf(() => parseWorkflows(text));
    expect(issue).toMatchObject({ path: 'workflows.wf.tasks.t1.on-success[1]', line: 7, column: 11 });
  });

  it('formats the message with the Mistral prefix and the path', () => {
    try {
      parseWorkflows("version: '2.0'\nwf:\n  tasks:\n    t1:\n      acton: x\n");
      throw new Error('unreachable');
    } catch (e) {
      expect((e as Error).message).toBe(
        "Invalid DSL: Additional properties are not allowed ('acton' was unexpected) [path=workflows.wf.tasks.t1.acton, line=5, column=7]",
      );
      expect((e as { kind: string }).kind).toBe('invalid');
    }
  });

  it('formats a syntax error as Definition could not be parsed', () => {
    expect(() => parseWorkflows("version: '2.0'\nwf: [1, 2\n")).toThrow(/^Definition could not be parsed: /);
  });

  it('formats a version error as Unsupported DSL version', () => {
    expect(() => parseWorkflows("version: '3.0'\nwf:\n  tasks:\n    t1: {action: std.noop}\n")).toThrow(
      /^Unsupported DSL version: 3\.0 \[path=version, line=1, column=10\]/,
    );
  });

  it('reports several issues at once', () => {
    const issues = issuesOf(() =>
      parseWorkflows(tasks(`t1:\n  acton: x\n  timeout: -1\nt2:\n  on-success: t9\n`)),
    );
    expect(issues.map((i) => i.path)).toEqual([
      'workflows.wf.tasks.t1.acton',
      'workflows.wf.tasks.t1.timeout',
    ]);
  });
});
