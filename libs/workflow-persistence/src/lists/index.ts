export {
  FILTER_OPS,
  type FilterOp,
  type FieldFilter,
  type ListColumnKind,
  SqlParams,
  filterCondition,
} from './list-filters';
export { type RunColumn, type RunTable, type RunListQuery, listRuns } from './run-list';
