import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'qos_specs' })
export class QosSpecsEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ type: 'varchar', length: 255 }) name!: string;
  @Column({ type: 'varchar', length: 16 }) consumer!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'qos_spec_items' })
export class QosSpecItemEntity {
  @PrimaryColumn({ name: 'qos_specs_id', type: 'uuid' }) qosSpecsId!: string;
  @PrimaryColumn({ type: 'varchar', length: 255 }) key!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) value!: string | null;
}
