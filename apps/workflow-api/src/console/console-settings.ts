import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { AuthMode } from '@osc/http-common';

/** What `/console` serves: the built operator console and where block storage answers. */
export interface ConsoleSettings {
  /** Directory of the built console (`index.html`, `assets/`); see apps/console/tools/build.mjs. */
  readonly dir: string;
  /**
   * Base URL of the block-storage API as this process reaches it (no trailing slash). The console's
   * block-storage pages read it through `GET /console/block-storage/*`, so the browser talks to one
   * origin and volume-api needs no CORS. Absent: those pages say block storage is not configured.
   */
  readonly volumeApiUrl?: string;
  /** The API's auth mode: the console asks for a token only in keystone mode. */
  readonly authMode: AuthMode;
}

export const CONSOLE_SETTINGS = Symbol('CONSOLE_SETTINGS');

@Global()
@Module({})
export class ConsoleSettingsModule {
  static forRoot(settings: ConsoleSettings): DynamicModule {
    return {
      module: ConsoleSettingsModule,
      providers: [{ provide: CONSOLE_SETTINGS, useValue: settings }],
      exports: [CONSOLE_SETTINGS],
    };
  }
}
