/**
 * Preloaded (`-r`) into the product processes of `--via=api --history=off` (bench/engine/run.ts): turns
 * the writing of execution history off in that process, before its main module loads, through the same
 * module instance the product then uses. A benchmark switch only: the product has no setting for it.
 */
import { setExecutionHistoryWrites } from '@osc/workflow-persistence';

setExecutionHistoryWrites(false);
