// The writer's pace while the consumers' backlog fills: when what waits for them passes half its
// bound (one batch applying, the next filling), each batch the writer commits owes a delay
// before the next one, sized so that the backlog would reach its bound just as the batch being
// applied is done (its expected time from the rate the last batches applied at). The writer then
// takes events at about the rate the consumers apply them, in small even steps.
//
// Why: with the bound alone the writer filled the next batch at full speed, then waited for the
// whole batch in flight to apply (seconds at a million events), and the OKs of everything that
// arrived meanwhile went out together: OK p99 1.4 s and its maximum 8.9 s where the median was
// 142 ms (docs/performance/2026-12.md). Paced, an OK waits about what is in flight divided by the rate.
// The bound still holds: a batch that applies slower than expected meets it as before.

/** The rate estimate follows each applied batch by this share (an exponential average). */
const FOLLOW = 0.3;

export class Pace {
  /** events per second the consumers applied at, lately (0: not known yet) */
  private rate = 0;
  /** the batches being applied, oldest first: their events, and when each was sent (ms) */
  private readonly inflight: { events: number; since: number }[] = [];
  /** when the last batch was done (ms): the next one's time counts from then, if it was sent before */
  private lastDone = 0;
  /** the writer may not start its next batch before this (ms, performance.now()) */
  private paidUntil = 0;
  /** delays asked of the writer since start, and their sum (ms) */
  delays = 0;
  delayedMs = 0;

  /** A batch of `events` is sent to the consumers at `now`. */
  applying(events: number, now: number): void {
    this.inflight.push({ events, since: now });
  }

  /**
   * The oldest batch sent is applied, or failed (`ok` false: its time says nothing of the rate).
   * A batch's time counts from when it was sent or when the one before it was done, whichever
   * is later: one sent while another applies waits for it.
   */
  applied(now: number, ok: boolean): void {
    const b = this.inflight.shift();
    const from = Math.max(b?.since ?? now, this.lastDone);
    this.lastDone = now;
    if (!ok || !b || b.events === 0) return;
    const r = (b.events * 1000) / Math.max(1, now - from);
    this.rate = this.rate === 0 ? r : this.rate + FOLLOW * (r - this.rate);
  }

  /**
   * The writer committed `events` to a backlog that holds `waiting` of at most `max` events and
   * `waitingBytes` of at most `maxBytes` (0: no bound): above half of either, they owe the time
   * the room left buys until the batch in flight is expected to be done.
   */
  committed(
    events: number,
    waiting: number,
    max: number,
    waitingBytes: number,
    maxBytes: number,
    now: number,
  ): void {
    const b = this.inflight[0];
    if (events === 0 || !b || this.rate === 0) return;
    const used = Math.max(max > 0 ? waiting / max : 0, maxBytes > 0 ? waitingBytes / maxBytes : 0);
    if (used <= 0.5) return;
    const expected = (b.events * 1000) / this.rate;
    // A batch later than expected: a tenth of its expected time is what is taken as left, so
    // the writer slows down further without stopping; the bound stops it if it must.
    const left = Math.max(expected - (now - Math.max(b.since, this.lastDone)), expected / 10);
    // The room the bound leaves, in events, over the time left: the events per ms allowed.
    const room = Math.max(1, ((1 - used) * waiting) / used);
    // Never more than the time left: past it the batch is done or late, and the bound decides.
    this.paidUntil = Math.min(Math.max(this.paidUntil, now) + (events * left) / room, now + left);
  }

  /** How long the writer waits before its next batch (ms; 0: at once). */
  delay(now: number): number {
    const d = this.paidUntil - now;
    if (d <= 0.5) return 0;
    this.delays++;
    this.delayedMs += d;
    return d;
  }
}
