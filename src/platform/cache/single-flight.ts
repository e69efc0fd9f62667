/**
 * Concurrent calls for one key share one run of the work: the first caller leads, the others join.
 * In-process only; across instances the cached resource adds a lock in the shared cache.
 */
export interface SingleFlight {
  /**
   * Runs `work`, or joins the run under way for `key`. A joiner shares the leader's failure only when
   * `shared(error)` says so (default: always); otherwise it runs the work for itself (leading or joining
   * a new run).
   */
  run<T>(
    key: string,
    work: () => Promise<T>,
    shared?: (error: unknown) => boolean,
  ): Promise<{ value: T; joined: boolean }>;
}

export function createSingleFlight(): SingleFlight {
  const flights = new Map<string, Promise<unknown>>();
  async function run<T>(
    key: string,
    work: () => Promise<T>,
    shared: (error: unknown) => boolean = () => true,
  ): Promise<{ value: T; joined: boolean }> {
    const existing = flights.get(key) as Promise<T> | undefined;
    if (existing) {
      try {
        return { value: await existing, joined: true };
      } catch (error) {
        // The run is over (it leaves the map before its joiners hear of it): this starts or joins a new one.
        if (!shared(error)) return run(key, work, shared);
        throw error;
      }
    }
    const flight = work().finally(() => flights.delete(key));
    flights.set(key, flight);
    return { value: await flight, joined: false };
  }
  return { run };
}
