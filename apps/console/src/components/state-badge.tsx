/** A state as text with a colour that only repeats it (never colour alone). */
export function StateBadge({ state }: { state: string }) {
  return <span className={`state state-${state.toLowerCase().replace(/[^a-z]+/g, '-')}`}>{state}</span>;
}
