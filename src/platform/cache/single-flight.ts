/**
 * Concurrent calls for one key share one run of the work: the first caller leads, the others join.
 * In-process only; across instances the cached resource adds a lock in the shared cache.
 */
export interface SingleFlight {
  run<T>(key: string, work: () => Promise<T>): Promise<{ value: T; joined: boolean }>;
}

export function createSingleFlight(): SingleFlight {
  const flights = new Map<string, Promise<unknown>>();
  return {
    async run<T>(key: string, work: () => Promise<T>) {
      const existing = flights.get(key) as Promise<T> | undefined;
      if (existing) return { value: await existing, joined: true };
      const flight = work().finally(() => flights.delete(key));
      flights.set(key, flight);
      return { value: await flight, joined: false };
    },
  };
}
