import type { Provider, Type } from '@nestjs/common';

// Controllers and providers of this area, registered in VolumeApiModule.
export const adminControllers: Type[] = [];
export const adminProviders: Provider[] = [];
