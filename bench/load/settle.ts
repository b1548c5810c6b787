// After the ingest: waits until the relay's derived indexes have applied everything it accepted
// (every `relay_consumer_lag_events` on its /metrics at 0), so the CPU the ingest is charged
// includes that work and is not left to whatever phase comes next. A relay that exports no such
// metric (it keeps no lagging index, or it is not this relay) counts as settled at once.

export interface Settled {
  /** seconds from the end of the ingest until nothing lagged */
  seconds: number;
  /** whether the relay reported consumer lag at all */
  reported: boolean;
  timedOut: boolean;
}

const LAG = /^relay_consumer_lag_events(?:\{[^}]*\})?\s+(\S+)/gm;

async function lagOf(metricsUrl: string): Promise<number | undefined> {
  try {
    const r = await fetch(metricsUrl);
    if (!r.ok) return undefined;
    const text = await r.text();
    let seen = false;
    let sum = 0;
    for (const m of text.matchAll(LAG)) {
      seen = true;
      sum += Number(m[1]);
    }
    return seen ? sum : undefined;
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

export async function settle(wsUrl: string, timeoutMs: number): Promise<Settled> {
  const url = metricsUrlOf(wsUrl);
  const started = performance.now();
  let reported = false;
  for (;;) {
    const lag = await lagOf(url);
    if (lag !== undefined) reported = true;
    const seconds = (performance.now() - started) / 1000;
    if (lag === undefined || lag === 0) return { seconds, reported, timedOut: false };
    if (seconds * 1000 > timeoutMs) return { seconds, reported, timedOut: true };
    await Bun.sleep(20);
  }
}
