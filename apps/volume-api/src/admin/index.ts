import type { Provider, Type } from '@nestjs/common';
import {
  CapabilitiesController,
  HostsController,
  MessagesController,
  QuotaClassSetsController,
  ServicesController,
} from './admin.controllers';
import { CapabilitiesService } from './capabilities.service';
import { MessagesService } from './messages.service';
import { QuotaClassesService } from './quota-classes.service';
import { ServicesService } from './services.service';

// Controllers and providers of this area, registered in VolumeApiModule.
export const adminControllers: Type[] = [
  ServicesController,
  HostsController,
  CapabilitiesController,
  QuotaClassSetsController,
  MessagesController,
];
export const adminProviders: Provider[] = [
  ServicesService,
  CapabilitiesService,
  QuotaClassesService,
  MessagesService,
];
