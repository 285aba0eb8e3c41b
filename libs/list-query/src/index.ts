export {
  type SortDirection,
  type SortKey,
  type ParamSink,
  type SortExpression,
  type MarkerValue,
  afterMarker,
  orderBy,
  pageTail,
} from './keyset';
