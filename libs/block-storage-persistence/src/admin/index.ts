import { ServiceEntity, MessageEntity } from './admin.entities';
import { CreateServicesAndMessages1764500000000 } from './admin.migration';

export * from './service.repository';
export * from './message.repository';

// Hosts, services, messages, quota classes: entities and migrations.
export const adminEntities: (new (...args: never[]) => unknown)[] = [ServiceEntity, MessageEntity];
export const adminMigrations: (new (...args: never[]) => unknown)[] = [
  CreateServicesAndMessages1764500000000,
];
