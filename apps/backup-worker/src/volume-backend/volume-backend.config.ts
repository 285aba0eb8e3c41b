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
  /** The machine named in this pool's `location_info` (default the hostname). */
  readonly machine: string;
  /** This back end's streaming data endpoint for migrations between machines; null: none. */
  readonly data: VolumeDataConfig | null;
}

export interface VolumeDataConfig {
  readonly host: string;
  readonly port: number;
  /** Base URL other back ends reach the endpoint at (reported as the pool's `data_url`). */
  readonly url: string;
  readonly secret: string;
  readonly timeoutMs: number;
}
