import type { ChaosResult } from './chaos';

/** One line per run: the figures the other teams fix against. */
export function summaryTable(results: readonly ChaosResult[]): string {
  const head = [
    'mode',
    'kills',
    'executions',
    'terminal',
    'lost',
    'error',
    'dup calls (expl/unexpl)',
    'missing calls',
    'tasks stuck',
    'volumes ok/stuck',
    'snap+backup stuck',
    'quota drift',
    'sha mismatch',
    'settled',
    'result',
  ];
  const rows = results.map((r) => {
    const v = r.verdict;
    return [
      r.mode,
      String(r.kills.length),
      String(v.executions.total),
      String(v.executions.terminal),
      String(v.executions.lost),
      String(v.executions.byState['ERROR'] ?? 0),
      `${v.calls.duplicatedExplained + v.retriedCalls.duplicatedExplained}/${v.calls.duplicatedUnexplained + v.retriedCalls.duplicatedUnexplained}`,
      String(v.calls.missing + v.retriedCalls.missing),
      String(v.tasksStuck),
      `${v.volumes.ok}/${v.volumes.stuck}`,
      String(v.snapshots.stuck + v.backups.stuck),
      String(v.quota.drift + v.quota.reservedLeft),
      `${v.restores.shaMismatches}/${v.restores.checked}`,
      r.settledAfterS === null ? 'no' : `${r.settledAfterS}s`,
      r.passed ? 'PASS' : 'FAIL',
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
