import { QosSpecItemEntity, QosSpecsEntity } from './qos.entities';
import { CreateQosSpecs1764650000000 } from './qos.migration';

export * from './qos.entities';
export * from './qos.migration';
export * from './qos.repository';

// QoS specs and their items: entities and migrations.
export const qosEntities: (new (...args: never[]) => unknown)[] = [QosSpecsEntity, QosSpecItemEntity];
export const qosMigrations: (new (...args: never[]) => unknown)[] = [CreateQosSpecs1764650000000];
