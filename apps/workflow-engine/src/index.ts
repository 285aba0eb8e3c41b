import { type DynamicModule, Module } from '@nestjs/common';
import {
  type Runtime,
  RuntimeModule,
  type RunningApp,
  startHttpApp,
  startWorkerContext,
} from '@osc/platform';
import type { WorkflowEngineConfig } from './config';
import { WorkflowEngineModule } from './workflow-engine.module';

export { loadConfig, loadInfraConfig, type WorkflowEngineConfig } from './config';
export { WorkflowEngineModule } from './workflow-engine.module';
export { EngineCommandHandler, type EngineHandlerOptions } from './engine/engine-command.handler';
export { toEngineEvent, toEngineEvents } from './engine/engine-events';
export { ActionExecutor } from './executor/action-executor';
export { EngineRunner } from './engine/engine.runner';

@Module({})
class WorkflowEngineRoot {
  static with(runtime: Runtime, config: WorkflowEngineConfig): DynamicModule {
    return {
      module: WorkflowEngineRoot,
      imports: [RuntimeModule.forRoot(runtime), WorkflowEngineModule.forRoot(config)],
    };
  }
}

/**
 * Start workflow-engine on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startWorkflowEngine(
  config: WorkflowEngineConfig,
  runtime: Runtime,
  opts: { http: boolean },
): Promise<RunningApp> {
  // Distributed: the action jobs an engine transaction writes are published by this process right
  // after the commit and deleted with one statement, not through a claim transaction of the relay
  // (docs/runtime.md). Other apps keep the relay: with the API's start commands handed off too, the
  // engines spent more CPU per execution with inline actions (bench/engine/README.md).
  if (runtime.mode === 'distributed')
    runtime.outbox.onHandOff((rows) => runtime.relay.handOff(rows), runtime.relay.published);
  const root = WorkflowEngineRoot.with(runtime, config);
  if (!opts.http) return startWorkerContext('workflow-engine', root, config.logLevel);
  return startHttpApp(root, {
    app: 'workflow-engine',
    service: 'workflow',
    authMode: 'noauth',
    bodyLimit: 1024,
    logLevel: config.logLevel,
    readiness: runtime.readiness,
    port: config.health.port,
    host: config.health.host,
  });
}
export { SCHEMA_PARTS } from './schema';
