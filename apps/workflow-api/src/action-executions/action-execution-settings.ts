import { type DynamicModule, Global, Module } from '@nestjs/common';

/** Deployment settings of `/v2/action_executions`. */
export interface ActionExecutionSettings {
  /**
   * Mistral's `[api] allow_action_execution_deletion` (default false: every DELETE answers 403).
   * The tempest gate enables it.
   */
  readonly allowDeletion: boolean;
  /** Longest wait of a synchronous run for its executor, in ms (Mistral's RPC timeout is 60 s). */
  readonly syncWaitMs: number;
}

export const DEFAULT_ACTION_EXECUTION_SETTINGS: ActionExecutionSettings = Object.freeze({
  allowDeletion: false,
  syncWaitMs: 60_000,
});

export const ACTION_EXECUTION_SETTINGS = Symbol('ACTION_EXECUTION_SETTINGS');

@Global()
@Module({})
export class ActionExecutionSettingsModule {
  static forRoot(settings: Partial<ActionExecutionSettings> = {}): DynamicModule {
    return {
      module: ActionExecutionSettingsModule,
      providers: [
        {
          provide: ACTION_EXECUTION_SETTINGS,
          useValue: { ...DEFAULT_ACTION_EXECUTION_SETTINGS, ...settings },
        },
      ],
      exports: [ACTION_EXECUTION_SETTINGS],
    };
  }
}
