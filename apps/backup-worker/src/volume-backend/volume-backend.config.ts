/** DI token and shape of the volume back end's configuration (validated in `config.ts`). */
export const VOLUME_BACKEND_CONFIG = Symbol('VOLUME_BACKEND_CONFIG');

export interface VolumeBackendConfig {
  /** Where volume and snapshot files live. */
  readonly directory: string;
  readonly host: string;
  readonly backendName: string;
  readonly availabilityZone: string;
  readonly maxOverSubscriptionRatio: number;
  readonly reservedPercentage: number;
  readonly statsIntervalSeconds: number;
  readonly concurrency: number;
}
