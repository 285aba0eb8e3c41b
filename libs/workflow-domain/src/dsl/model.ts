/**
 * The typed model of the Mistral Workflow DSL v2 after parsing and validation. Every value is plain JSON
 * (objects, arrays, strings, numbers, booleans, null): a spec can be stored as JSON with an execution and
 * read back unchanged, so a running execution keeps the spec it started with.
 *
 * Values that may be expressions are typed `T | string`; a string there is an expression (`<% … %>` or
 * `{{ … }}`) to evaluate at run time (`isExpression` tells them apart where `T` is itself a string).
 */

export const DSL_VERSION = '2.0';

export const WORKFLOW_TYPES = ['direct', 'reverse'] as const;
export type WorkflowType = (typeof WORKFLOW_TYPES)[number];

/** Targets of transitions that are not tasks (DSL-4.2). A command wins over a task of the same name. */
export const ENGINE_COMMANDS = ['noop', 'fail', 'succeed', 'pause'] as const;
export type EngineCommand = (typeof ENGINE_COMMANDS)[number];

export const isEngineCommand = (name: string): name is EngineCommand =>
  (ENGINE_COMMANDS as readonly string[]).includes(name);

/** Clause keys of direct tasks, in the order targets are collected (DSL-4.4 orders them by state). */
export const TRANSITION_EVENTS = ['on-success', 'on-error', 'on-complete', 'on-skip'] as const;
export type TransitionEvent = (typeof TRANSITION_EVENTS)[number];

export const TASK_TYPES = ['ACTION', 'WORKFLOW'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** The action a task without `action` and `workflow` runs. */
export const DEFAULT_ACTION = 'std.noop';

/** A literal or an expression string evaluated at run time. */
export type Expressive<T> = T | string;

/** One declared input (workflow or ad-hoc action): a bare name is required, `name: default` optional. */
export interface InputParameter {
  readonly name: string;
  readonly required: boolean;
  /** Literal default (never evaluated, DSL-2.2); present only when `required` is false. May be null. */
  readonly default?: unknown;
  /**
   * Python `str()` of the default when it differs from what the JSON value gives, i.e. when the source
   * had integral floats (`1.0`): the API shows `x="1.0"` as Mistral does.
   */
  readonly defaultText?: string;
}

export type PublishMap = Readonly<Record<string, unknown>>;

/** Publish scopes of an advanced transition clause or of a resolved publish step (DSL-14.6). */
export interface PublishScopes {
  readonly branch?: PublishMap;
  readonly global?: PublishMap;
  /** Accepted and ignored by the engine (reference behaviour). */
  readonly atomic?: PublishMap;
}

/** One target of a transition clause, normalised. */
export interface Transition {
  /** Task name or engine command name. */
  readonly target: string;
  /** `command` when `target` is one of {@link ENGINE_COMMANDS} (even if a task has that name). */
  readonly kind: 'task' | 'command';
  /** Expression that must be truthy for the target to be taken; absent means always. */
  readonly condition?: string;
  /** Inline parameters (`fail msg="..."` gives `{msg: '...'}`); values may be expressions. */
  readonly params: Readonly<Record<string, unknown>>;
}

/** A transition clause as written on the task (or in task-defaults). */
export interface TransitionClause {
  readonly publish?: PublishScopes;
  readonly next: readonly Transition[];
}

export interface RetryPolicy {
  readonly count: Expressive<number>;
  readonly delay: Expressive<number>;
  readonly breakOn?: string;
  readonly continueOn?: string;
}

/** Task policies (DSL-6). Absent keys mean "no such policy". Numbers are seconds (or counts). */
export interface TaskPolicies {
  readonly retry?: RetryPolicy;
  readonly waitBefore?: Expressive<number>;
  readonly waitAfter?: Expressive<number>;
  readonly timeout?: Expressive<number>;
  readonly pauseBefore?: Expressive<boolean>;
  readonly concurrency?: Expressive<number>;
  readonly failOn?: Expressive<boolean>;
}

export const POLICY_KEYS = [
  'retry',
  'waitBefore',
  'waitAfter',
  'timeout',
  'pauseBefore',
  'concurrency',
  'failOn',
] as const;

/** `var in <source>`: the source is a literal list or an expression evaluating to a list (DSL-14.8). */
export interface WithItemsVariable {
  readonly variable: string;
  readonly source: readonly unknown[] | string;
}

export interface TaskDefaultsSpec {
  readonly policies: TaskPolicies;
  readonly safeRerun?: Expressive<boolean>;
  readonly clauses: Readonly<Partial<Record<TransitionEvent, TransitionClause>>>;
  readonly requires: readonly string[];
}

export interface TaskSpec {
  readonly name: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly type: TaskType;
  /** Action name without inline parameters (may be an expression); `std.noop` when neither key is given. */
  readonly action?: string;
  /** Sub-workflow name without inline parameters (may be an expression). */
  readonly workflow?: string;
  /** Input map with inline parameters merged in (inline wins), or one expression evaluating to a map. */
  readonly input: Readonly<Record<string, unknown>> | string;
  /** The inline parameters alone, as parsed from `action:`/`workflow:`. */
  readonly inlineInput: Readonly<Record<string, unknown>>;
  readonly publish?: PublishMap;
  readonly publishOnError?: PublishMap;
  readonly publishOnSkip?: PublishMap;
  /** Empty when the task has no `with-items`. */
  readonly withItems: readonly WithItemsVariable[];
  /** Effective policies: the task's own, each missing kind taken from task-defaults. */
  readonly policies: TaskPolicies;
  readonly keepResult: Expressive<boolean>;
  readonly safeRerun: Expressive<boolean>;
  readonly target?: string;
  /** Direct workflows: `all` or a positive count (`one` is 1; `0` means no join, as in the reference). */
  readonly join?: 'all' | number;
  /** Direct workflows: the clauses written on the task itself. */
  readonly clauses: Readonly<Partial<Record<TransitionEvent, TransitionClause>>>;
  /**
   * Direct workflows: effective targets per event: the task's own `next` items, or, when it has none for
   * that event, the task-defaults items minus those naming the task itself (DSL-2.6).
   */
  readonly transitions: Readonly<Record<TransitionEvent, readonly Transition[]>>;
  /** Reverse workflows: effective prerequisites (own plus task-defaults, minus the task itself). */
  readonly requires: readonly string[];
}

export interface WorkflowSpec {
  readonly version: typeof DSL_VERSION;
  /** Full name (`<workbook>.<name>` inside a workbook). */
  readonly name: string;
  readonly type: WorkflowType;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly input: readonly InputParameter[];
  readonly output?: Readonly<Record<string, unknown>>;
  readonly outputOnError?: Readonly<Record<string, unknown>>;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly taskDefaults?: TaskDefaultsSpec;
  /** Tasks in written order. */
  readonly tasks: readonly TaskSpec[];
  /** Direct: tasks no clause names (DSL-4.3). Reverse: tasks without prerequisites. */
  readonly startTasks: readonly string[];
  /** Direct: for each task, the tasks whose clauses name it (join inbound set, DSL-4.8). */
  readonly inboundTasks: Readonly<Record<string, readonly string[]>>;
}

export interface ActionSpec {
  /** Full name (`<workbook>.<name>` inside a workbook). */
  readonly name: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** Base action name without inline parameters. */
  readonly base: string;
  /** `base-input` with the base's inline parameters merged in (inline wins). */
  readonly baseInput: Readonly<Record<string, unknown>>;
  readonly input: readonly InputParameter[];
  /** Present when the definition has `output` (which may be null). */
  readonly hasOutput: boolean;
  readonly output?: unknown;
}

export interface WorkbookSpec {
  readonly version: typeof DSL_VERSION;
  readonly name: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly workflows: readonly WorkflowSpec[];
  readonly actions: readonly ActionSpec[];
}
