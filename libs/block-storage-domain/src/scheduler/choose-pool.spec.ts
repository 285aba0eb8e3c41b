import { choosePool, type SchedulerView } from './choose-pool';
import type { PoolState } from './placement';

const pool = (
  backend: string,
  name: string,
  free: number,
  caps: Record<string, unknown> = {},
  az = 'nova',
): PoolState => ({
  name: `host@${backend}#${name}`,
  backend: `host@${backend}`,
  availabilityZone: az,
  capabilities: {
    total_capacity_gb: 100,
    free_capacity_gb: free,
    reserved_percentage: 0,
    volume_backend_name: backend,
    ...caps,
  },
});
const view = (pools: PoolState[], disabled: string[] = []): SchedulerView => ({
  pools,
  disabledBackends: new Set(disabled),
});
const name = (r: { kind: string; pool?: PoolState }): string => `${r.kind}:${r.pool?.name ?? '-'}`;

describe('choosePool', () => {
  const a = pool('alpha', 'a', 10);
  const b = pool('beta', 'b', 90);
  const c = pool('gamma', 'c', 50, {}, 'other');

  describe('volume', () => {
    const ask = {
      kind: 'volume',
      size: 1,
      availabilityZone: null,
      extraSpecs: {},
      excludedPools: [],
      sourceBackend: null,
    } as const;

    it('weighs the enabled pools and honours the multiplier', () => {
      expect(name(choosePool(view([a, b]), ask))).toBe('placed:host@beta#b');
      expect(name(choosePool(view([a, b]), { ...ask, capacityWeightMultiplier: -1 }))).toBe(
        'placed:host@alpha#a',
      );
      expect(name(choosePool(view([a, b], ['host@beta']), ask))).toBe('placed:host@alpha#a');
    });

    it('keeps clones on the source back end and skips pools already tried', () => {
      expect(name(choosePool(view([a, b]), { ...ask, sourceBackend: 'host@alpha' }))).toBe(
        'placed:host@alpha#a',
      );
      expect(name(choosePool(view([a, b]), { ...ask, excludedPools: ['host@beta#b'] }))).toBe(
        'placed:host@alpha#a',
      );
      const none = choosePool(view([a, b], ['host@alpha']), { ...ask, sourceBackend: 'host@alpha' });
      expect(none).toEqual({ kind: 'no-valid-backend', reasons: {} });
    });
  });

  describe('group', () => {
    it('weighs the enabled pools of the zone that accept every type by free capacity', () => {
      const ask = { kind: 'group', availabilityZone: 'nova', typeSpecs: [{}, {}] } as const;
      expect(name(choosePool(view([a, b, c]), ask))).toBe('placed:host@beta#b');
      expect(name(choosePool(view([a, b, c]), { ...ask, capacityWeightMultiplier: -1 }))).toBe(
        'placed:host@alpha#a',
      );
      expect(
        name(choosePool(view([a, b, c]), { ...ask, typeSpecs: [{}, { volume_backend_name: 'alpha' }] })),
      ).toBe('placed:host@alpha#a');
      expect(name(choosePool(view([a, b, c]), { ...ask, availabilityZone: 'other' }))).toBe(
        'placed:host@gamma#c',
      );
    });

    it("leaves out back ends an operator disabled, as Cinder's host manager does", () => {
      const ask = { kind: 'group', availabilityZone: 'nova', typeSpecs: [{}] } as const;
      expect(name(choosePool(view([a, b, c], ['host@beta']), ask))).toBe('placed:host@alpha#a');
      expect(choosePool(view([a, b, c], ['host@alpha', 'host@beta']), ask)).toEqual({
        kind: 'no-valid-backend',
        reasons: {
          'host@alpha#a': 'back end host@alpha is disabled',
          'host@beta#b': 'back end host@beta is disabled',
          'host@gamma#c': 'zone other is not nova',
        },
      });
    });

    it('says why no pool qualifies', () => {
      const r = choosePool(view([a, c]), {
        kind: 'group',
        availabilityZone: 'nova',
        typeSpecs: [{ volume_backend_name: 'beta' }],
      });
      expect(r).toEqual({
        kind: 'no-valid-backend',
        reasons: {
          'host@alpha#a': 'volume type 1 of the group is not accepted',
          'host@gamma#c': 'zone other is not nova',
        },
      });
    });
  });

  describe('retype', () => {
    const ask = {
      kind: 'retype',
      currentPool: 'host@alpha#a',
      size: 1,
      availabilityZone: 'nova',
      extraSpecs: { volume_backend_name: 'beta' },
      migrationPolicy: 'on-demand',
    } as const;

    it('stays in place when the current pool accepts the new type', () => {
      const alphaType = { ...ask, extraSpecs: { volume_backend_name: 'alpha' } };
      expect(name(choosePool(view([a, b]), alphaType))).toBe('in-place:host@alpha#a');
    });

    it('never retypes in place on a back end an operator disabled: Cinder weighs only enabled back ends', () => {
      const anyType = { ...ask, extraSpecs: {} };
      expect(choosePool(view([a, b], ['host@alpha']), { ...anyType, migrationPolicy: 'never' }).kind).toBe(
        'no-valid-backend',
      );
      expect(name(choosePool(view([a, b], ['host@alpha']), anyType))).toBe('placed:host@beta#b');
    });

    it('migrates on demand to another enabled pool, never with policy never', () => {
      expect(name(choosePool(view([a, b]), ask))).toBe('placed:host@beta#b');
      expect(choosePool(view([a, b]), { ...ask, migrationPolicy: null }).kind).toBe('no-valid-backend');
      expect(choosePool(view([a, b]), { ...ask, migrationPolicy: 'never' }).kind).toBe('no-valid-backend');
      expect(choosePool(view([a, b], ['host@beta']), ask).kind).toBe('no-valid-backend');
    });

    it('places a volume that never had a pool', () => {
      expect(name(choosePool(view([a, b]), { ...ask, currentPool: null }))).toBe('placed:host@beta#b');
    });
  });
});
