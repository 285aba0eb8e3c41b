import { capabilityText, matchesRequirement } from './capability-match';

/** A capacity figure as back ends report it (BS-10.1). */
export type CapacityValue = number | 'infinite' | 'unknown';

/**
 * One pool as the scheduler sees it. `capabilities` merges the back-end level stats
 * (`volume_backend_name`, `vendor_name`, `storage_protocol`, ...) with the pool's own.
 */
export interface PoolState {
  /** `<host>@<backend>#<pool>` */
  readonly name: string;
  /** `<host>@<backend>`: the worker that owns the pool. */
  readonly backend: string;
  readonly availabilityZone: string;
  readonly capabilities: Readonly<Record<string, unknown>>;
}

export interface PlacementRequest {
  /** GiB to allocate; for an extend, the increase (new − old). */
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly extraSpecs: Readonly<Record<string, string | null>>;
  /** Pools already tried for this request (re-scheduling, BS-10.5). */
  readonly excludedPools?: readonly string[];
}

const capacity = (v: unknown): CapacityValue => {
  if (v === 'infinite' || v === 'unknown') return v;
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : 'unknown';
};

const num = (v: unknown, fallback: number): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : fallback;
};

const isTrue = (v: unknown): boolean =>
  v === true || (typeof v === 'string' && ['true', '1', 'yes', 'on', 't', 'y'].includes(v.toLowerCase()));

/** Whether the pool provisions this request thin (BS-10.2): it supports thin and the type does not ask for thick. */
function usesThin(pool: PoolState, specs: Readonly<Record<string, string | null>>): boolean {
  const requested = specs['provisioning:type'] ?? specs['capabilities:provisioning:type'] ?? null;
  if (requested !== null && requested.trim().toLowerCase() === 'thick') return false;
  return isTrue(pool.capabilities['thin_provisioning_support']);
}

interface Figures {
  total: CapacityValue;
  free: CapacityValue;
  reserved: number;
  provisioned: number;
  ratio: number;
}

function figures(pool: PoolState): Figures {
  const c = pool.capabilities;
  const total = capacity(c['total_capacity_gb']);
  const free = capacity(c['free_capacity_gb']);
  const reservedPct = num(c['reserved_percentage'], 0);
  const reserved = typeof total === 'number' ? Math.floor((total * reservedPct) / 100) : 0;
  const provisioned = num(c['provisioned_capacity_gb'], num(c['allocated_capacity_gb'], 0));
  const ratio = num(c['max_over_subscription_ratio'], 1);
  return { total, free, reserved, provisioned, ratio };
}

/**
 * Free capacity as the weigher ranks it (BS-10.3): thin `(total − reserved) × r − provisioned`,
 * thick `min(free, total − reserved − provisioned)`. Non-numeric figures → the value as reported.
 */
export function virtualFreeCapacity(
  pool: PoolState,
  specs: Readonly<Record<string, string | null>> = {},
): CapacityValue {
  const f = figures(pool);
  if (f.free === 'infinite' || f.free === 'unknown') return f.free;
  if (f.total === 'infinite' || f.total === 'unknown') return f.total;
  if (usesThin(pool, specs)) return (f.total - f.reserved) * f.ratio - f.provisioned;
  return Math.min(f.free, f.total - f.reserved - f.provisioned);
}

/** A filter returns null when the pool passes, else the reason it was rejected. */
export type PoolFilter = (pool: PoolState, request: PlacementRequest) => string | null;

/** AvailabilityZoneFilter: the type's `RESKEY:availability_zones` list wins over the requested zone. */
export const availabilityZoneFilter: PoolFilter = (pool, request) => {
  const listed = request.extraSpecs['RESKEY:availability_zones'];
  if (typeof listed === 'string' && listed.trim() !== '') {
    const zones = listed.split(',').map((z) => z.trim());
    return zones.includes(pool.availabilityZone)
      ? null
      : `zone ${pool.availabilityZone} not in ${zones.join(',')}`;
  }
  if (request.availabilityZone !== null && request.availabilityZone !== pool.availabilityZone) {
    return `zone ${pool.availabilityZone} is not ${request.availabilityZone}`;
  }
  return null;
};

/** CapacityFilter (BS-10.2). */
export const capacityFilter: PoolFilter = (pool, request) => {
  const size = request.size;
  if (size <= 0) return null;
  const f = figures(pool);
  if (f.free === 'infinite' || f.free === 'unknown') return null;
  if (f.total === 'infinite' || f.total === 'unknown') return null;
  if (f.total <= 0) return 'total capacity is zero';
  if (usesThin(pool, request.extraSpecs)) {
    if (f.ratio < 1) return `over-subscription ratio ${f.ratio} is below 1`;
    const usable = (f.total - f.reserved) * f.ratio;
    if ((f.provisioned + size) / usable > f.ratio)
      return 'provisioned ratio would exceed the over-subscription ratio';
    if (usable - f.provisioned < size)
      return `virtual free capacity ${usable - f.provisioned}G is below ${size}G`;
    return null;
  }
  const available = Math.min(f.free, f.total - f.reserved - f.provisioned);
  return available >= size ? null : `free capacity ${available}G is below ${size}G`;
};

/** Looks a (possibly nested, `:`-separated) capability up. */
function lookupCapability(capabilities: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let cur: unknown = capabilities;
  for (const part of path) {
    if (
      typeof cur !== 'object' ||
      cur === null ||
      Array.isArray(cur) ||
      !Object.prototype.hasOwnProperty.call(cur, part)
    )
      return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * CapabilitiesFilter: every extra spec whose key is unscoped or starts with `capabilities:` must
 * be satisfied by the pool's capability; other scopes (`RESKEY:`, `provisioning:`, vendor
 * prefixes) are for someone else.
 */
export const capabilitiesFilter: PoolFilter = (pool, request) => {
  for (const [key, requirement] of Object.entries(request.extraSpecs)) {
    const parts = key.split(':');
    let path: string[];
    if (parts.length === 1) path = parts;
    else if (parts[0] === 'capabilities') path = parts.slice(1);
    else continue;
    const cap = lookupCapability(pool.capabilities, path);
    if (cap === undefined) return `capability ${path.join(':')} is missing`;
    if (!matchesRequirement(cap, requirement))
      return `capability ${path.join(':')}=${capabilityText(cap)} does not satisfy ${requirement ?? 'null'}`;
  }
  return null;
};

/** The default filter chain, in order. */
export const DEFAULT_FILTERS: readonly (readonly [string, PoolFilter])[] = [
  ['AvailabilityZoneFilter', availabilityZoneFilter],
  ['CapacityFilter', capacityFilter],
  ['CapabilitiesFilter', capabilitiesFilter],
];

export interface WeighedPool {
  readonly pool: PoolState;
  readonly weight: number;
}

export type PlacementResult =
  | { readonly kind: 'placed'; readonly pool: PoolState; readonly ranking: readonly WeighedPool[] }
  | { readonly kind: 'no-valid-backend'; readonly reasons: Readonly<Record<string, string>> };

/**
 * Capacity weigher (BS-10.3): virtual free capacity normalised to 0..1 over the candidates, times
 * the multiplier (1.0 spreads, negative stacks). `infinite`/`unknown` rank lowest.
 */
export function weighByCapacity(
  pools: readonly PoolState[],
  request: PlacementRequest,
  multiplier = 1,
): WeighedPool[] {
  const values = pools.map((p) => virtualFreeCapacity(p, request.extraSpecs));
  const numbers = values.filter((v): v is number => typeof v === 'number');
  const min = numbers.length ? Math.min(...numbers) : 0;
  const max = numbers.length ? Math.max(...numbers) : 0;
  const lowest = multiplier >= 0 ? 0 : multiplier;
  return pools.map((pool, i) => {
    const v = values[i];
    if (typeof v !== 'number') return { pool, weight: lowest - 1 };
    const normalised = max === min ? 0 : (v - min) / (max - min);
    return { pool, weight: normalised * multiplier };
  });
}

/**
 * Places a request: filters in order, then the capacity weigher; the highest weight wins and ties
 * go to the first candidate. Excluded pools (already tried) never qualify.
 */
export function placeVolume(
  pools: readonly PoolState[],
  request: PlacementRequest,
  options: { capacityWeightMultiplier?: number } = {},
): PlacementResult {
  const reasons: Record<string, string> = {};
  const candidates = pools.filter((pool) => {
    if (request.excludedPools?.includes(pool.name)) {
      reasons[pool.name] = 'already tried';
      return false;
    }
    for (const [name, filter] of DEFAULT_FILTERS) {
      const reason = filter(pool, request);
      if (reason !== null) {
        reasons[pool.name] = `${name}: ${reason}`;
        return false;
      }
    }
    return true;
  });
  if (candidates.length === 0) return { kind: 'no-valid-backend', reasons };
  const weighed = weighByCapacity(candidates, request, options.capacityWeightMultiplier ?? 1);
  const ranking = [...weighed].sort((a, b) => b.weight - a.weight);
  return { kind: 'placed', pool: heaviest(weighed).pool, ranking };
}

/** The highest weight of a non-empty list; ties go to the first. */
export function heaviest(weighed: readonly WeighedPool[]): WeighedPool {
  let best = weighed[0] as WeighedPool;
  for (const w of weighed) if (w.weight > best.weight) best = w;
  return best;
}

/** Pools that could host a type at all (3.35 `volume_type` pool filter): the filters with size 0. */
export const poolsForType = (
  pools: readonly PoolState[],
  extraSpecs: Readonly<Record<string, string | null>>,
): PoolState[] =>
  pools.filter((pool) =>
    DEFAULT_FILTERS.every(([, f]) => f(pool, { size: 0, availabilityZone: null, extraSpecs }) === null),
  );

/**
 * Debits a placement in the scheduler's view (BS-10.4) so concurrent requests spread; the next
 * stats report replaces the view.
 */
export function debitPool(pool: PoolState, size: number): PoolState {
  const c = pool.capabilities;
  const free = capacity(c['free_capacity_gb']);
  return {
    ...pool,
    capabilities: {
      ...c,
      free_capacity_gb: typeof free === 'number' ? free - size : free,
      allocated_capacity_gb: num(c['allocated_capacity_gb'], 0) + size,
      provisioned_capacity_gb: num(c['provisioned_capacity_gb'], num(c['allocated_capacity_gb'], 0)) + size,
    },
  };
}
