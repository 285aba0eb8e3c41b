import { type DynamicModule, Module } from '@nestjs/common';
import { SYSTEM_WORKFLOWS_ENABLED, SystemWorkflowsService } from './system-workflows.service';

/** The standard workflows every project sees (`create_instance`, `delete_instance`). */
@Module({})
export class SystemWorkflowsModule {
  static forRoot(enabled: boolean): DynamicModule {
    return {
      module: SystemWorkflowsModule,
      providers: [{ provide: SYSTEM_WORKFLOWS_ENABLED, useValue: enabled }, SystemWorkflowsService],
      exports: [SystemWorkflowsService],
    };
  }
}
