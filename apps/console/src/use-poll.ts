import { useEffect, useRef, useState } from 'react';

/**
 * Calls `load` now and every `intervalMs` (and again when `deps` change); keeps the last value
 * and the last error. A slow answer never overlaps the next call.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  intervalMs: number | null,
  deps: readonly unknown[],
): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const v = await loadRef.current();
        if (!stopped) {
          setData(v);
          setError(null);
        }
      } catch (err) {
        if (!stopped) setError(err instanceof Error ? err.message : String(err));
      }
      if (!stopped && intervalMs !== null) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [...deps, intervalMs, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}
