// The removal records every consumer has passed are dropped from the log: through the log's
// writer when the process has one (`by`), so that one writer writes the log; else in a
// transaction of their own (data commands, tests).
import { commitCause } from "../lmdb/full.ts";
import { trimRemovals } from "../store/removals.ts";
import type { Store } from "../store/types.ts";

export class RemovalTrims {
  /** removal records up to this seq are trimmed (or asked to be) */
  private through = 0;
  private write: (through: number) => Promise<unknown>;

  constructor(store: Store) {
    this.write = (through) => store.env.transaction(() => trimRemovals(store.removals, through));
  }

  /** Has `task` (the writer's) write the trims. */
  by(task: (run: (s: Store) => unknown) => Promise<unknown>): void {
    this.write = (through) => task((s) => trimRemovals(s.removals, through));
  }

  /** The records through `seq` are gone already (caught up from disk). */
  trimmed(seq: number): void {
    this.through = seq;
  }

  /**
   * Every consumer has passed the records through `seq`: drop them. A write on the log, so only
   * when there are some; otherwise it would delay the writer's next batch.
   */
  passed(seq: number): void {
    if (seq <= this.through) return;
    this.through = seq;
    void this.write(seq).catch((e: unknown) => commitCause(e));
  }
}
