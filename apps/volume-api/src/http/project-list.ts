import {
  admitFilters,
  isTrueish,
  parseBooleanFilter,
  parsePaging,
  queryValue,
  SORT_ALIASES,
  supports,
  type Paging,
} from '@osc/block-storage-domain';
import { NotFoundError } from '@osc/errors';
import type { ApiRequest } from './api-request';

/** A list request of a project-owned collection as the routes read it. */
export interface ProjectListRequest<F> {
  /** An admin asked for every project (`all_tenants`). */
  readonly allTenants: boolean;
  /** The project listed: null for all projects. */
  readonly projectId: string | null;
  readonly filters: F;
  readonly paging: Paging;
  /** `with_count` asked, where the microversion knows it (3.45). */
  readonly withCount: boolean;
}

/**
 * The one reading of the list requests of volumes, snapshots and backups (BS-5): `all_tenants`
 * (admins only), the filters the microversion and role admit (`project_id` only with
 * `all_tenants`) compiled for the repository, paging and sort, and `with_count`. Each part is
 * read in this order, so a request with several faults is refused for the first of them.
 */
export function readProjectList<F>(
  api: ApiRequest,
  o: {
    readonly resource: 'volume' | 'snapshot' | 'backup';
    readonly maxLimit: number;
    readonly sortKeys: readonly string[];
    readonly compileFilters: (admitted: Record<string, string>) => F;
  },
): ProjectListRequest<F> {
  const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
  const admitted = admitFilters(o.resource, api.query, { mv: api.mv, isAdmin: api.isAdmin });
  if (!allTenants) delete admitted['project_id'];
  const filters = o.compileFilters(admitted);
  const paging = parsePaging(api.query, {
    maxLimit: o.maxLimit,
    sortKeys: o.sortKeys,
    sortAliases: SORT_ALIASES,
  });
  const withCountRaw = queryValue(api.query['with_count']);
  const withCount =
    supports(api.mv, 'list.with-count') &&
    withCountRaw !== undefined &&
    parseBooleanFilter('with_count', withCountRaw, api.mv);
  return { allTenants, projectId: allTenants ? null : api.ctx.projectId, filters, paging, withCount };
}

/** Cinder's 404 for a `marker` that names no row the caller may list. */
export async function assertMarkerListed(
  marker: string | null,
  find: (id: string) => Promise<unknown>,
): Promise<void> {
  if (marker !== null && !(await find(marker)))
    throw new NotFoundError('Marker', marker, `Marker ${marker} could not be found.`);
}
