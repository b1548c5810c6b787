// Giving memory back once a burst of writes is over. During an ingest the relay's heap, the
// allocator's free pages and the data files' mapped pages all grow, and each fell back on its
// own schedule (the heap when JavaScriptCore next collected, the mappings at the next periodic
// release): VmRSS stayed near 300 MiB for up to ten seconds after a 50k-event ingest had been
// applied. When nothing has committed and no client has sent a frame for a tick, and the
// consumers have applied everything, one full collection and one release of the mappings bring
// it down at once. It runs once per burst, and at most once per `minGapMs`, so a trickle of
// events does not collect every second. It waits for reads to pause as well because the
// collection stops the main thread for ~25 ms after a 50k-event ingest: run in the middle of a
// stream of searches, it made their slowest answers.

export interface QuietTrimOptions {
  /** grows with every commit and every client frame */
  activity: () => number;
  /** the consumers have applied everything committed */
  caughtUp: () => boolean;
  /** what to do once a burst is over */
  trim: () => void;
  /** at least this long between two trims */
  minGapMs: number;
}

export class QuietTrim {
  private seen: number;
  /** the activity count at the last trim (the one before any commit counts as trimmed) */
  private trimmedAt: number;
  private lastTrimMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: QuietTrimOptions) {
    this.seen = o.activity();
    this.trimmedAt = this.seen;
  }

  /** Called on a timer (`nowMs`: a monotonic clock); trims when a burst is over. */
  tick(nowMs: number): boolean {
    const now = this.o.activity();
    const quiet = now === this.seen;
    this.seen = now;
    if (!quiet || now === this.trimmedAt || nowMs - this.lastTrimMs < this.o.minGapMs) return false;
    if (!this.o.caughtUp()) return false;
    this.trimmedAt = now;
    this.lastTrimMs = nowMs;
    this.o.trim();
    return true;
  }
}
