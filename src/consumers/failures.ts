// What the runner says and keeps when a batch fails or is slow: the failure while the consumers
// cannot apply (a full disk), logged at once and then at most once a minute; the free space of
// derived/ to know when to try again; the slow batches, with where their time went.
import { FullState } from "../lmdb/full.ts";
import { Throttle } from "../log.ts";

/** A failing consumer batch is logged again at most this often (a slow one too). */
const LOG_EVERY_MS = 60_000;
/** A batch that takes this long is said in the log, with where its time went. */
const SLOW_BATCH_MS = 2000;

export interface Failure {
  reason: string;
  /** for lack of room */
  full: boolean;
  /** since when batches fail (ms since the epoch) */
  since: number;
}

export class ApplyFailures {
  /** why the last batch failed, while the consumers cannot apply; else undefined */
  current: Failure | undefined;
  /** batches that failed to apply since start */
  count = 0;
  /** free space of derived/ when a batch failed for lack of room */
  private readonly room: FullState;
  private readonly failureLog = new Throttle(LOG_EVERY_MS);
  private readonly slowLog = new Throttle(LOG_EVERY_MS);

  constructor(
    derivedPath: string,
    private readonly log: (line: string) => void,
    private readonly logError: (line: string) => void,
  ) {
    this.room = new FullState(derivedPath);
  }

  /** No room in derived/: wait for more free space (or RETRY_MS) instead of failing each tick. */
  waitForRoom(): boolean {
    return this.current?.full === true && !this.room.shouldTry();
  }

  /** A batch failed: say so at once, then at most once a minute while it goes on failing. */
  failed(reason: string, full: boolean, events: number, waiting: number): void {
    const now = Date.now();
    const was = this.current;
    this.current = { reason, full, since: was?.since ?? now };
    if (full) this.room.failed(reason, now);
    this.count++;
    if (!was) this.failureLog.reset();
    if (!this.failureLog.due(now)) return;
    const what = full ? `storage full: ${reason}` : reason;
    this.logError(
      was
        ? `consumers: still failing since ${new Date(was.since).toISOString()}, ${waiting} events waiting: ${what}`
        : `consumers: could not apply a batch of ${events} events, trying again: ${what}`,
    );
  }

  /** A batch applied: the failures, if any, are over. */
  applied(waiting: number): void {
    if (!this.current) return;
    const seconds = Math.round((Date.now() - this.current.since) / 1000);
    this.log(`consumers: applying again after ${seconds} s of failures, ${waiting} events to catch up`);
    this.current = undefined;
    this.room.cleared();
  }

  /**
   * A batch that held the writer for seconds (the backlog is bounded, so OKs wait on it): said
   * with where its time went (`took`, ms by step), at most once a minute.
   */
  slow(events: number, ms: number, took: Readonly<Record<string, number>> | undefined): void {
    if (ms < SLOW_BATCH_MS || !this.slowLog.due()) return;
    const steps = Object.entries(took ?? {})
      .filter(([, t]) => t >= 100)
      .sort((a, b) => b[1] - a[1])
      .map(([step, t]) => `${step} ${Math.round(t)} ms`);
    this.log(
      `consumers: a batch of ${events} events took ${Math.round(ms)} ms${steps.length ? ` (${steps.join(", ")})` : ""}`,
    );
  }
}
