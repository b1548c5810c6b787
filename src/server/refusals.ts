// The periodic line that sums up what the relay refused, by reason, so a flood shows as one
// line a minute at info instead of one line per frame. Read from the counters /metrics serves.
import type { Counters } from "../context.ts";

/** Every refusal counted so far, keyed `what.reason` (event.invalid, frame.rate-limited, …). */
function tally(c: Counters): Record<string, number> {
  const out: Record<string, number> = {};
  // A duplicate is answered OK true: not a refusal.
  for (const [r, n] of Object.entries(c.eventsRejected)) if (r !== "duplicate") out[`event.${r}`] = n;
  for (const verb of ["rate-limited", "unreadable"])
    if (c.framesIn[verb]) out[`frame.${verb}`] = c.framesIn[verb];
  for (const [r, n] of Object.entries(c.connectionsRefused)) out[`connection.${r}`] = n;
  return out;
}

export class RefusalSummary {
  private last: Record<string, number> = {};

  constructor(private readonly counters: Counters) {
    this.last = tally(counters);
  }

  /** Refusals since the previous call, by reason; undefined when there were none. */
  next(): { total: number; byReason: Record<string, number> } | undefined {
    const now = tally(this.counters);
    const byReason: Record<string, number> = {};
    let total = 0;
    for (const [k, n] of Object.entries(now)) {
      const d = n - (this.last[k] ?? 0);
      if (d > 0) {
        byReason[k] = d;
        total += d;
      }
    }
    this.last = now;
    return total > 0 ? { total, byReason } : undefined;
  }
}
