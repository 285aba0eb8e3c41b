import { type DynamicModule, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Runtime, RuntimeModule, type RunningApp, startHttpApp } from '@osc/platform';
import { ActionExecutionSettingsModule } from './action-executions/action-execution-settings';
import { DEFAULT_CONSOLE_DIR, type WorkflowApiConfig } from './config';
import { ConsoleModule } from './console/console.module';
import { ConsoleSettingsModule } from './console/console-settings';
import { WorkflowApiModule } from './workflow-api.module';
import { WorkflowPolicySettingsModule } from './policy/authorize';
import { ServicesModule } from './services/services.module';
import { SystemWorkflowsModule } from './system-workflows/system-workflows.module';

export { DEFAULT_CONSOLE_DIR, loadConfig, loadInfraConfig, type WorkflowApiConfig } from './config';
export { WorkflowApiModule } from './workflow-api.module';

@Module({})
class WorkflowApiRoot {
  static with(runtime: Runtime, config: WorkflowApiConfig): DynamicModule {
    const policy = WorkflowPolicySettingsModule.forRoot({
      overrides: config.policyOverrides ?? {},
      authMode: config.authMode,
    });
    const actionExecutions = ActionExecutionSettingsModule.forRoot({
      allowDeletion: config.allowActionExecutionDeletion ?? false,
    });
    const systemWorkflows = SystemWorkflowsModule.forRoot(config.systemWorkflows === true);
    const services = ServicesModule.forRoot(
      config.services ?? { heartbeatSeconds: 10, aliveWithinSeconds: 120 },
    );
    const consoleSettings = ConsoleSettingsModule.forRoot({
      dir: config.console?.dir ?? DEFAULT_CONSOLE_DIR,
      volumeApiUrl: config.console?.volumeApiUrl,
      authMode: config.authMode,
    });
    return {
      module: WorkflowApiRoot,
      imports: [
        RuntimeModule.forRoot(runtime),
        policy,
        actionExecutions,
        WorkflowApiModule,
        systemWorkflows,
        services,
        consoleSettings,
        ConsoleModule,
      ],
    };
  }
}

/** Start the Mistral v2 API on the configured port, on the given runtime. */
export function startWorkflowApi(
  config: WorkflowApiConfig,
  runtime: Runtime,
): Promise<RunningApp & { port: number; app: NestFastifyApplication }> {
  return startHttpApp(WorkflowApiRoot.with(runtime, config), {
    app: 'workflow-api',
    service: 'workflow',
    authMode: config.authMode,
    keystone: config.keystone,
    bodyLimit: config.http.bodyLimit,
    logLevel: config.logLevel,
    readiness: runtime.readiness,
    port: config.http.port,
    host: config.http.host,
    // The console's page loads without a token; the API calls it makes carry one.
    isPublicPath: (path, method) =>
      method === 'GET' &&
      (path === '/' ||
        path === '/v2' ||
        path === '/v2/' ||
        path === '/console' ||
        path.startsWith('/console/')),
  });
}
export { SCHEMA_PARTS } from './schema';
