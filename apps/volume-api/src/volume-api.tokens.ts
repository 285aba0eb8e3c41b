import type { VolumeApiConfig } from './config';

/** DI token of the validated volume-api configuration. */
export const VOLUME_API_CONFIG = Symbol('VOLUME_API_CONFIG');
export type { VolumeApiConfig };
