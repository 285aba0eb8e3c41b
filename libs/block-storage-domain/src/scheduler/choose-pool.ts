import {
  heaviest,
  placeVolume,
  poolsForType,
  weighByCapacity,
  type PlacementResult,
  type PoolState,
} from './placement';

type ExtraSpecs = Readonly<Record<string, string | null>>;

/**
 * What the scheduler chooses from: the pools whose back ends reported within the service-down
 * interval (BS-10.1) and the back ends whose cinder-volume service an operator disabled or froze
 * (os-services; `disabledBackends` holds both).
 */
export interface SchedulerView {
  readonly pools: readonly PoolState[];
  readonly disabledBackends: ReadonlySet<string>;
}

/**
 * A new volume (BS-10): filters and the capacity weigher over the enabled pools. A clone or a volume
 * from a snapshot stays on `sourceBackend`, the back end holding the bytes (null: anywhere).
 */
export interface VolumePlacementAsk {
  readonly kind: 'volume';
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly extraSpecs: ExtraSpecs;
  /** Pools already tried for this volume (re-scheduling, BS-10.5). */
  readonly excludedPools: readonly string[];
  readonly sourceBackend: string | null;
  readonly capacityWeightMultiplier?: number;
}

/**
 * A group (BS-7.11.2, BS-8.4): among the enabled pools of the group's zone that every one of its
 * volume types' extra specs accepts, the one the capacity weigher ranks first (the first volume
 * type's specs decide thin provisioning; ties go to the first pool). Sizes play no part in the
 * filters: the group holds no bytes itself. As Cinder's host manager, which schedules from the
 * cinder-volume services that are neither disabled nor frozen, a back end an operator disabled takes
 * no new group.
 */
export interface GroupPlacementAsk {
  readonly kind: 'group';
  readonly availabilityZone: string;
  readonly typeSpecs: readonly ExtraSpecs[];
  readonly capacityWeightMultiplier?: number;
}

/**
 * A retype (BS-8.1.4): the volume stays where it is when its current pool accepts the new type and
 * its back end is enabled (Cinder's `find_retype_backend` looks for the current back end among the
 * weighed candidates, which leave out disabled services); otherwise, with `migrationPolicy`
 * on-demand, the filters and the weigher choose another enabled pool for it.
 */
export interface RetypePlacementAsk {
  readonly kind: 'retype';
  /** The pool the volume lives in (`host`), null for a volume never placed. */
  readonly currentPool: string | null;
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly extraSpecs: ExtraSpecs;
  /** `os-retype`'s migration_policy; absent (null) means never. */
  readonly migrationPolicy: 'never' | 'on-demand' | null;
  readonly capacityWeightMultiplier?: number;
}

export type PlacementAsk = VolumePlacementAsk | GroupPlacementAsk | RetypePlacementAsk;

/** No pool qualifies; `reasons` says why each pool was rejected, as far as the ask records it. */
export interface NoValidBackend {
  readonly kind: 'no-valid-backend';
  readonly reasons: Readonly<Record<string, string>>;
}
export type GroupPlacement = { readonly kind: 'placed'; readonly pool: PoolState } | NoValidBackend;
export type RetypePlacement =
  | { readonly kind: 'in-place'; readonly pool: PoolState }
  | { readonly kind: 'placed'; readonly pool: PoolState }
  | NoValidBackend;

const enabled = (view: SchedulerView): PoolState[] =>
  view.pools.filter((p) => !view.disabledBackends.has(p.backend));

function placeGroup(view: SchedulerView, ask: GroupPlacementAsk): GroupPlacement {
  const reasons: Record<string, string> = {};
  for (const p of view.pools)
    if (view.disabledBackends.has(p.backend)) reasons[p.name] = `back end ${p.backend} is disabled`;
  let candidates = enabled(view).filter((p) => {
    if (p.availabilityZone === ask.availabilityZone) return true;
    reasons[p.name] = `zone ${p.availabilityZone} is not ${ask.availabilityZone}`;
    return false;
  });
  ask.typeSpecs.forEach((specs, i) => {
    const accepting = poolsForType(candidates, specs);
    for (const p of candidates)
      if (!accepting.includes(p)) reasons[p.name] = `volume type ${i + 1} of the group is not accepted`;
    candidates = accepting;
  });
  if (candidates.length === 0) return { kind: 'no-valid-backend', reasons };
  const weighed = weighByCapacity(
    candidates,
    { size: 0, availabilityZone: ask.availabilityZone, extraSpecs: ask.typeSpecs[0] ?? {} },
    ask.capacityWeightMultiplier ?? 1,
  );
  return { kind: 'placed', pool: heaviest(weighed).pool };
}

function placeRetype(view: SchedulerView, ask: RetypePlacementAsk): RetypePlacement {
  const current = enabled(view).find((p) => p.name === ask.currentPool);
  if (current !== undefined && poolsForType([current], ask.extraSpecs).length > 0)
    return { kind: 'in-place', pool: current };
  if (ask.migrationPolicy !== 'on-demand')
    return {
      kind: 'no-valid-backend',
      reasons: ask.currentPool === null ? {} : { [ask.currentPool]: 'the new type needs a migration' },
    };
  const result = placeVolume(
    enabled(view),
    {
      size: ask.size,
      availabilityZone: ask.availabilityZone,
      extraSpecs: ask.extraSpecs,
      excludedPools: ask.currentPool === null ? [] : [ask.currentPool],
    },
    { capacityWeightMultiplier: ask.capacityWeightMultiplier ?? 1 },
  );
  return result.kind === 'placed' ? { kind: 'placed', pool: result.pool } : result;
}

/**
 * The scheduler's one placement choice (BS-10), pure: scheduler-stats calls it for new volumes;
 * the volume API calls it for groups and retypes, whose answers clients observe in the response
 * itself (Cinder's API asks its scheduler over RPC instead: `create_group` and `retype` are casts to
 * cinder-scheduler, which runs the same filters and weighers).
 */
export function choosePool(view: SchedulerView, ask: VolumePlacementAsk): PlacementResult;
export function choosePool(view: SchedulerView, ask: GroupPlacementAsk): GroupPlacement;
export function choosePool(view: SchedulerView, ask: RetypePlacementAsk): RetypePlacement;
export function choosePool(
  view: SchedulerView,
  ask: PlacementAsk,
): PlacementResult | GroupPlacement | RetypePlacement {
  switch (ask.kind) {
    case 'volume': {
      const source = ask.sourceBackend;
      const pools = enabled(view).filter((p) => source === null || p.backend === source);
      return placeVolume(
        pools,
        {
          size: ask.size,
          availabilityZone: ask.availabilityZone,
          extraSpecs: ask.extraSpecs,
          excludedPools: ask.excludedPools,
        },
        { capacityWeightMultiplier: ask.capacityWeightMultiplier ?? 1 },
      );
    }
    case 'group':
      return placeGroup(view, ask);
    case 'retype':
      return placeRetype(view, ask);
  }
}
