import { type DynamicModule, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Runtime, RuntimeModule, type RunningApp, startHttpApp } from '@osc/platform';
import type { VolumeApiConfig } from './config';
import { cinderPolicy } from '@osc/policy';
import { setPublicUrl, volumeApiOnRequestWith } from './http/api-request';
import { VolumeApiModule } from './volume-api.module';

export { loadConfig, loadInfraConfig, type VolumeApiConfig } from './config';
export { VolumeApiModule } from './volume-api.module';

@Module({})
class VolumeApiRoot {
  static with(runtime: Runtime, config: VolumeApiConfig): DynamicModule {
    return {
      module: VolumeApiRoot,
      imports: [RuntimeModule.forRoot(runtime), VolumeApiModule.forRoot(config)],
    };
  }
}

/** Start the Cinder v2/v3 API on the configured port, on the given runtime. */
export function startVolumeApi(
  config: VolumeApiConfig,
  runtime: Runtime,
): Promise<RunningApp & { port: number; app: NestFastifyApplication }> {
  setPublicUrl(config.http.publicUrl);
  return startHttpApp(VolumeApiRoot.with(runtime, config), {
    app: 'volume-api',
    service: 'block-storage',
    authMode: config.authMode,
    keystone: config.keystone,
    bodyLimit: config.http.bodyLimit,
    logLevel: config.logLevel,
    readiness: runtime.readiness,
    port: config.http.port,
    host: config.http.host,
    isPublicPath: (path, method) =>
      method === 'GET' &&
      (path === '/' || path === '/v3' || path === '/v3/' || path === '/v2' || path === '/v2/'),
    onRequest: volumeApiOnRequestWith(cinderPolicy(config.policyOverrides ?? {})),
  });
}
export { SCHEMA_PARTS } from './schema';
