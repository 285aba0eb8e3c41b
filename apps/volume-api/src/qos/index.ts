import type { Provider, Type } from '@nestjs/common';
import { QosSpecsController } from './qos-specs.controller';
import { QosSpecsService } from './qos-specs.service';

// Controllers and providers of this area, registered in VolumeApiModule.
export const qosControllers: Type[] = [QosSpecsController];
export const qosProviders: Provider[] = [QosSpecsService];
