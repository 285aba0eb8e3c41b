import { type DynamicModule, Module } from '@nestjs/common';
import type { WorkflowEngineConfig } from './config';
import { ENGINE_CONFIG, EngineRunner } from './engine/engine.runner';

/** Runs workflow executions: consumes engine commands, fires timers and executes actions. */
@Module({})
export class WorkflowEngineModule {
  static forRoot(config: WorkflowEngineConfig): DynamicModule {
    return {
      module: WorkflowEngineModule,
      providers: [{ provide: ENGINE_CONFIG, useValue: config }, EngineRunner],
      exports: [EngineRunner],
    };
  }
}
