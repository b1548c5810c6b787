// The writer's view of storage full: the refusal it gives while full, and the log lines when it
// becomes full, stays full (once a minute) and has room again.
import { FullState } from "../lmdb/full.ts";
import { log, Throttle } from "../log.ts";
import type { Reject } from "../wire/reasons.ts";
import { error } from "../wire/reasons.ts";
import { FULL } from "./batch.ts";

/** A full writer logs again at most this often. */
const FULL_LOG_MS = 60_000;

export class NoRoom {
  /** storage full (full.ts): refusals, /metrics */
  readonly full: FullState;
  private readonly fullLog = new Throttle(FULL_LOG_MS);

  constructor(path: string) {
    this.full = new FullState(path);
  }

  /** While full and not yet time to try a commit again: the refusal for every event. */
  refusing(): Reject | undefined {
    return this.full.full && !this.full.shouldTry() ? this.refusal() : undefined;
  }

  /** The refusal while storage is full. */
  refusal(): Reject {
    return error(`${FULL}${this.full.reason ?? "no room left"}`);
  }

  /** A commit failed for lack of room: log it at once, then at most once a minute. */
  failed(reason: string, items: number): void {
    const was = this.full.full;
    this.full.failed(reason);
    if (!was) this.fullLog.reset();
    if (!this.fullLog.due()) return;
    log.error(
      was ? "storage still full, writes refused" : "storage full, writes refused until there is room",
      {
        reason,
        items,
        refused: this.full.refused,
        since: new Date(this.full.since).toISOString(),
      },
    );
  }

  /** A commit that wrote to the log went through: room again, if there was none. */
  wrote(): void {
    if (!this.full.full) return;
    const seconds = Math.round((Date.now() - this.full.since) / 1000);
    log.info("storage has room again, writes accepted", { seconds, refused: this.full.refused });
    this.full.cleared();
    this.fullLog.reset();
  }
}
