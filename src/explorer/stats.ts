// GET /v0/stats: the figures the explorer shows live, read from the counters the relay already
// keeps. The events/s rate is measured between requests, so an unwatched relay does no work.
import type { RelayContext } from "../context.ts";

export interface Stats {
  /** events in the store */
  events: number;
  /** open WebSocket connections */
  connections: number;
  /** open subscriptions */
  subscriptions: number;
  /** events accepted per second over the last `rate_window_seconds` */
  events_per_second: number;
  rate_window_seconds: number;
  /** events accepted since start */
  accepted: number;
  uptime_seconds: number;
}

/** Samples older than this are dropped, so the rate follows the last minute. */
const WINDOW_MS = 60_000;

/** [ms, events accepted] samples, oldest first, at most one a second. */
const samples = new WeakMap<RelayContext, [number, number][]>();

export function readStats(ctx: RelayContext, now = Date.now()): Stats {
  const accepted = ctx.counters.eventsAccepted;
  const s = samples.get(ctx) ?? [[ctx.startedAt, 0]];
  samples.set(ctx, s);
  if (now - s[s.length - 1]![0] >= 1000) s.push([now, accepted]);
  while (s.length > 2 && now - s[1]![0] >= WINDOW_MS) s.shift();
  const [t0, n0] = s[0]!;
  const ms = Math.max(now - t0, 1);
  return {
    events: (ctx.store.events.getStats() as { entryCount: number }).entryCount,
    connections: ctx.conns.size,
    subscriptions: ctx.live.size,
    events_per_second: Math.round(((accepted - n0) / ms) * 1000 * 100) / 100,
    rate_window_seconds: Math.round(ms / 1000),
    accepted,
    uptime_seconds: Math.floor((now - ctx.startedAt) / 1000),
  };
}
