import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { Runtime } from './runtime';
import {
  CLOCK,
  COMMAND_BUS,
  DATA_SOURCE,
  JOB_QUEUE,
  OUTBOX_WRITER,
  RUNTIME,
  type Clock,
  systemClock,
} from './tokens';

/**
 * Hands the shared runtime to an app's providers. The runtime is created outside Nest (once per
 * process, shared by every app in embedded mode) and closed by whoever created it.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRoot(runtime: Runtime, clock: Clock = systemClock): DynamicModule {
    return {
      module: RuntimeModule,
      providers: [
        { provide: RUNTIME, useValue: runtime },
        { provide: DATA_SOURCE, useValue: runtime.dataSource },
        { provide: COMMAND_BUS, useValue: runtime.bus },
        { provide: JOB_QUEUE, useValue: runtime.jobs },
        { provide: OUTBOX_WRITER, useValue: runtime.outbox },
        { provide: CLOCK, useValue: clock },
      ],
      exports: [RUNTIME, DATA_SOURCE, COMMAND_BUS, JOB_QUEUE, OUTBOX_WRITER, CLOCK],
    };
  }
}
