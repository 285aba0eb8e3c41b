import type { TaskStatus } from '../model/task-states';

/** A timeline of the tasks that ran: one bar from start to finish (or now) per task. */
export function Gantt({ statuses, now }: { statuses: readonly TaskStatus[]; now: number }) {
  const ran = statuses.filter((s) => s.startedAt !== null);
  if (ran.length === 0) return <p className="muted">No task has started yet.</p>;
  const start = Math.min(...ran.map((s) => s.startedAt ?? now));
  const end = Math.max(start + 1000, ...ran.map((s) => s.finishedAt ?? now));
  const span = end - start;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return (
    <table className="gantt" aria-label="timeline">
      <tbody>
        {ran.map((s) => {
          const from = (s.startedAt ?? start) - start;
          const to = (s.finishedAt ?? now) - start;
          return (
            <tr key={s.name}>
              <th scope="row">{s.name}</th>
              <td className="gantt-track">
                <div
                  className={`gantt-bar state-bg-${s.state.toLowerCase().replace(/[^a-z]+/g, '-')}`}
                  style={{
                    left: `${(from / span) * 100}%`,
                    width: `${Math.max(0.5, ((to - from) / span) * 100)}%`,
                  }}
                  title={`${s.name}: ${s.state}, ${seconds(to - from)}`}
                />
              </td>
              <td className="gantt-time">
                {s.state} · {seconds(to - from)}
                {s.finishedAt === null ? ' so far' : ''}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
