// Stored reads (REQ, COUNT) take at most a budget of the main thread's time in one turn of the
// event loop; the reads that arrive past it start in the next turns, in arrival order.
//
// Why: the main thread also runs every step of a published event that comes back from another
// thread (its verification, its commit, the sync that makes it durable) and the fanout to live
// subscribers. Each step is a callback that waits for the turn in progress to end, and under a
// steady query load every turn was full of REQs: each step of a live event waited behind a
// turn's worth of them (docs/performance/2026-11.md, "Reads while writes flow"). With a budget, a step
// waits for at most the budget plus the one read that crosses it.

export class ReadTurns {
  private readonly waiting: (() => void)[] = [];
  /** when this turn's first read started; -1 outside a turn that has admitted one */
  private turnStart = -1;

  /**
   * budgetMs: main-thread time per turn for reads while `writing` says an event is on its way
   * (read and not yet answered); 0 or less admits every read at once. With nothing being
   * written reads are not held: the budget's cost (a turn of the event loop for each deferred
   * read, ~4% of the REQs a saturated main thread answers) buys nothing then.
   */
  constructor(
    private readonly budgetMs: number,
    private readonly writing: () => boolean,
  ) {}

  /** Reads that waited for a later turn, since start. */
  deferred = 0;

  /** Reads waiting for a later turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** undefined: start the read now; a promise: start it once the promise resolves. */
  admit(): Promise<void> | undefined {
    if (this.budgetMs <= 0) return undefined;
    // Reads start in arrival order: none overtakes one that waits.
    if (this.waiting.length === 0) {
      if (!this.writing()) return undefined;
      if (this.turnStart < 0) {
        this.begin();
        return undefined;
      }
      if (performance.now() - this.turnStart < this.budgetMs) return undefined;
    }
    this.deferred++;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private begin(): void {
    this.turnStart = performance.now();
    setImmediate(this.nextTurn);
  }

  /** A new turn: what arrived from other threads and the sockets meanwhile has run. */
  private readonly nextTurn = (): void => {
    this.turnStart = -1;
    if (this.waiting.length === 0) return;
    this.begin();
    this.release();
  };

  /**
   * Starts the first waiting read. Its continuation runs as the next microtask, so `more`,
   * queued after it, looks at the clock once that read's synchronous part (its index walk,
   * mostly) has run.
   */
  private release(): void {
    this.waiting.shift()!();
    if (this.waiting.length > 0) queueMicrotask(this.more);
  }

  private readonly more = (): void => {
    if (this.waiting.length === 0) return;
    if (!this.writing() || (this.turnStart >= 0 && performance.now() - this.turnStart < this.budgetMs))
      this.release();
  };
}

import type { ReaderPool } from "../readers/pool.ts";

declare module "../context.ts" {
  interface RelayContext {
    /** stored reads' share of each turn of the event loop (query.turnBudgetUs) */
    reads: ReadTurns;
    /** the threads that answer REQs' stored part (query.readers; none: this thread does) */
    readers?: ReaderPool;
  }
}
