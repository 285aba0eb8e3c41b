import { matchesRequirement } from './capability-match';
import {
  availabilityZoneFilter,
  capabilitiesFilter,
  capacityFilter,
  debitPool,
  placeVolume,
  poolsForType,
  virtualFreeCapacity,
  weighByCapacity,
  type PlacementRequest,
  type PoolState,
} from './placement';

const pool = (name: string, caps: Record<string, unknown>, az = 'nova'): PoolState => ({
  name: `host@be#${name}`,
  backend: 'host@be',
  availabilityZone: az,
  capabilities: { total_capacity_gb: 100, free_capacity_gb: 100, reserved_percentage: 0, ...caps },
});
const req = (
  size: number,
  extraSpecs: Record<string, string | null> = {},
  availabilityZone: string | null = null,
): PlacementRequest => ({
  size,
  extraSpecs,
  availabilityZone,
});

describe('matchesRequirement', () => {
  it.each([
    [true, '<is> True', true],
    [true, '<is> true', true],
    ['True', '<is> True', true],
    [false, '<is> True', false],
    [false, '<is> False', true],
    [undefined, '<is> False', false],
    ['abcdef', '<in> cde', true],
    ['abcdef', '<in> xyz', false],
    ['b', '<or> a <or> b <or> c', true],
    ['d', '<or> a <or> b <or> c', false],
    [10, '>= 10', true],
    ['9', '>= 10', false],
    [10, '<= 10', true],
    [11, '<= 10', false],
    [5, '== 5', true],
    ['5.0', '== 5', true],
    [5, '!= 5', false],
    [20, '= 10', true],
    [5, '= 10', false],
    ['abc', '>= 10', false],
    ['abc', 's== abc', true],
    ['abc', 's!= abc', false],
    ['abc', 's< abd', true],
    ['abc', 's<= abc', true],
    ['abd', 's> abc', true],
    ['abc', 's>= abd', false],
    ['plain', 'plain', true],
    ['plain', 'other', false],
    [true, 'True', true],
    [3, '3', true],
    ['x', '<in>', false],
    ['x', '', false],
  ])('%p vs %p → %p', (cap, requirement, expected) => {
    expect(matchesRequirement(cap, requirement)).toBe(expected);
  });
});

describe('filters', () => {
  it.each([
    ['no zone asked', 'nova', req(1), null],
    ['requested zone matches', 'nova', req(1, {}, 'nova'), null],
    ['requested zone differs', 'az2', req(1, {}, 'nova'), 'zone az2 is not nova'],
    ['type list wins', 'az2', req(1, { 'RESKEY:availability_zones': 'az1, az2' }, 'nova'), null],
    [
      'type list excludes',
      'nova',
      req(1, { 'RESKEY:availability_zones': 'az1,az2' }),
      'zone nova not in az1,az2',
    ],
  ])('AvailabilityZoneFilter: %s', (_name, az, request, expected) => {
    expect(availabilityZoneFilter(pool('p', {}, az), request)).toBe(expected);
  });
  it.each([
    ['size 0 passes anything', { total_capacity_gb: 0, free_capacity_gb: 0 }, req(0), true],
    ['infinite free passes', { free_capacity_gb: 'infinite' }, req(10_000), true],
    ['unknown free passes', { free_capacity_gb: 'unknown' }, req(10_000), true],
    ['total 0 fails', { total_capacity_gb: 0, free_capacity_gb: 5 }, req(1), false],
    ['thick fits', { free_capacity_gb: 50 }, req(50), true],
    ['thick too big', { free_capacity_gb: 50 }, req(51), false],
    ['thick honours reserved', { free_capacity_gb: 100, reserved_percentage: 10 }, req(91), false],
    ['thick uses provisioned', { free_capacity_gb: 100, provisioned_capacity_gb: 60 }, req(41), false],
    ['thick falls back to allocated', { free_capacity_gb: 100, allocated_capacity_gb: 60 }, req(40), true],
    [
      'thin oversubscribes',
      {
        thin_provisioning_support: true,
        max_over_subscription_ratio: 2,
        provisioned_capacity_gb: 150,
        free_capacity_gb: 1,
      },
      req(50),
      true,
    ],
    [
      'thin over the ratio',
      {
        thin_provisioning_support: true,
        max_over_subscription_ratio: 2,
        provisioned_capacity_gb: 150,
        free_capacity_gb: 1,
      },
      req(51),
      false,
    ],
    [
      'thin ratio below 1 fails',
      { thin_provisioning_support: true, max_over_subscription_ratio: 0.5 },
      req(1),
      false,
    ],
    [
      'type asks thick',
      { thin_provisioning_support: true, max_over_subscription_ratio: 20, free_capacity_gb: 10 },
      req(11, { 'provisioning:type': 'thick' }),
      false,
    ],
    ['string figures', { total_capacity_gb: '100', free_capacity_gb: '20' }, req(20), true],
  ])('CapacityFilter: %s', (_name, caps, request, passes) => {
    expect(capacityFilter(pool('p', caps), request) === null).toBe(passes);
  });
  it.each([
    ['no specs', {}, {}, true],
    ['unscoped match', { volume_backend_name: 'lvm' }, { volume_backend_name: 'lvm' }, true],
    ['unscoped mismatch', { volume_backend_name: 'nfs' }, { volume_backend_name: 'lvm' }, false],
    ['missing capability', { cc: 'yes' }, {}, false],
    ['scoped capabilities', { 'capabilities:multiattach': '<is> True' }, { multiattach: true }, true],
    ['nested capabilities', { 'capabilities:a:b': '>= 3' }, { a: { b: 4 } }, true],
    ['nested missing', { 'capabilities:a:c': '>= 3' }, { a: { b: 4 } }, false],
    [
      'other scopes ignored',
      { 'RESKEY:availability_zones': 'x', 'foo:bar': 'baz', 'provisioning:type': 'thin' },
      {},
      true,
    ],
    ['prototype keys are not capabilities', { constructor: 'x' }, {}, false],
  ])('CapabilitiesFilter: %s', (_name, specs, caps, passes) => {
    expect(capabilitiesFilter(pool('p', caps), req(1, specs)) === null).toBe(passes);
  });
});

describe('placement', () => {
  it('computes virtual free capacity', () => {
    expect(
      virtualFreeCapacity(
        pool('p', { free_capacity_gb: 40, provisioned_capacity_gb: 30, reserved_percentage: 10 }),
      ),
    ).toBe(40);
    expect(
      virtualFreeCapacity(
        pool('p', {
          thin_provisioning_support: true,
          max_over_subscription_ratio: 2,
          provisioned_capacity_gb: 30,
        }),
      ),
    ).toBe(170);
    expect(virtualFreeCapacity(pool('p', { free_capacity_gb: 'infinite' }))).toBe('infinite');
  });
  it('weighs by normalised free capacity and ranks infinite lowest', () => {
    const pools = [
      pool('a', { free_capacity_gb: 10 }),
      pool('b', { free_capacity_gb: 90 }),
      pool('c', { free_capacity_gb: 'infinite' }),
      pool('d', { free_capacity_gb: 50 }),
    ];
    expect(weighByCapacity(pools, req(1)).map((w) => w.weight)).toEqual([0, 1, -1, 0.5]);
    expect(weighByCapacity(pools, req(1), -1).map((w) => w.weight)).toEqual([-0, -1, -2, -0.5]);
  });
  it('spreads to the emptiest pool, stacks with a negative multiplier', () => {
    const pools = [pool('a', { free_capacity_gb: 10 }), pool('b', { free_capacity_gb: 90 })];
    const spread = placeVolume(pools, req(5));
    expect(spread.kind === 'placed' && spread.pool.name).toBe('host@be#b');
    const stack = placeVolume(pools, req(5), { capacityWeightMultiplier: -1 });
    expect(stack.kind === 'placed' && stack.pool.name).toBe('host@be#a');
  });
  it('breaks ties by order', () => {
    const result = placeVolume([pool('a', {}), pool('b', {})], req(1));
    expect(result.kind === 'placed' && result.pool.name).toBe('host@be#a');
  });
  it('explains when nothing fits, and skips excluded pools', () => {
    const pools = [pool('a', { free_capacity_gb: 1 }), pool('b', {}, 'az2'), pool('c', {})];
    expect(placeVolume(pools, { ...req(5, {}, 'nova'), excludedPools: ['host@be#c'] })).toEqual({
      kind: 'no-valid-backend',
      reasons: {
        'host@be#a': 'CapacityFilter: free capacity 1G is below 5G',
        'host@be#b': 'AvailabilityZoneFilter: zone az2 is not nova',
        'host@be#c': 'already tried',
      },
    });
  });
  it('spreads concurrent requests once the view is debited', () => {
    let pools = [pool('a', { free_capacity_gb: 100 }), pool('b', { free_capacity_gb: 95 })];
    const chosen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = placeVolume(pools, req(10));
      if (r.kind !== 'placed') throw new Error('unplaced');
      chosen.push(r.pool.name.split('#')[1]!);
      pools = pools.map((p) => (p.name === r.pool.name ? debitPool(p, 10) : p));
    }
    expect(chosen).toEqual(['a', 'b', 'a', 'b']);
    expect(pools[0]!.capabilities).toMatchObject({
      free_capacity_gb: 80,
      allocated_capacity_gb: 20,
      provisioned_capacity_gb: 20,
    });
  });
  it('lists pools able to host a type', () => {
    const pools = [pool('a', { multiattach: true }), pool('b', { multiattach: false })];
    expect(poolsForType(pools, { multiattach: '<is> True' }).map((p) => p.name)).toEqual(['host@be#a']);
  });
});
