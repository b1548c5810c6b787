// After the ingest: waits until the relay's derived indexes have applied everything it accepted
// (every `relay_consumer_lag_events` on its /metrics at 0), so the CPU the ingest is charged
// includes that work and is not left to whatever phase comes next, and so a sustained ingest rate
// (first EVENT → nothing left to apply) can be given. A relay that exports no such metric (it
// keeps no lagging index, or it is not this relay) counts as settled at once.

export interface Settled {
  /** seconds from the end of the ingest until nothing lagged (or the wait gave up) */
  seconds: number;
  /** whether the relay reported consumer lag at all */
  reported: boolean;
  /** consumer lag (events, the largest) when the wait began: right after the last OK */
  lagAtStart?: number;
  /** the lag when the wait gave up, if it did */
  lagAtEnd?: number;
  timedOut: boolean;
  /** the lag did not shrink for stallMs */
  stalled: boolean;
  /** /metrics stopped answering after it had answered: the relay went away */
  unreachable: boolean;
  /** Unix ms when the lag was seen at 0 (or the wait gave up) */
  at: number;
}

const LAG = /^relay_consumer_lag_events(?:\{[^}]*\})?\s+(\S+)/gm;

/**
 * The largest `relay_consumer_lag_events` (the consumers share one backlog, so each reports the
 * same events; the largest is how many wait); undefined if the relay exports none or did not
 * answer.
 */
export async function lagOf(metricsUrl: string, timeoutMs = 5_000): Promise<number | undefined> {
  try {
    const r = await fetch(metricsUrl, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) return undefined;
    const text = await r.text();
    let seen = false;
    let most = 0;
    for (const m of text.matchAll(LAG)) {
      seen = true;
      most = Math.max(most, Number(m[1]));
    }
    return seen ? most : undefined;
  } catch {
    return undefined;
  }
}

/** The relay's /metrics address for a ws:// or wss:// relay URL. */
export const metricsUrlOf = (wsUrl: string): string => {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === "wss:" ? "https:" : "http:";
  u.pathname = "/metrics";
  return u.toString();
};

export async function settle(wsUrl: string, timeoutMs: number, stallMs = 0): Promise<Settled> {
  const url = metricsUrlOf(wsUrl);
  const started = performance.now();
  let reported = false;
  let lagAtStart: number | undefined;
  let best = Number.POSITIVE_INFINITY;
  let bestAt = started;
  const end = (lag: number | undefined, how: Partial<Settled>): Settled => ({
    seconds: (performance.now() - started) / 1000,
    reported,
    lagAtStart,
    ...(lag ? { lagAtEnd: lag } : {}),
    timedOut: false,
    stalled: false,
    unreachable: false,
    at: Math.round(performance.timeOrigin + performance.now()),
    ...how,
  });
  for (;;) {
    const lag = await lagOf(url);
    if (lag === undefined) return end(undefined, { unreachable: reported });
    reported = true;
    lagAtStart ??= lag;
    if (lag === 0) return end(0, {});
    const now = performance.now();
    if (lag < best) {
      best = lag;
      bestAt = now;
    }
    if (now - started > timeoutMs) return end(lag, { timedOut: true });
    if (stallMs > 0 && now - bestAt > stallMs) return end(lag, { stalled: true });
    await Bun.sleep(20);
  }
}
