// Runs the consumers of the event log. The writer tells it, in commit order, what each batch
// stored and removed; it keeps that in the open batch (a "generation") and every `intervalMs`
// or `batch` events has every consumer apply the generation in one write transaction that also
// writes their watermarks: on a thread of their own (apply.ts, worker.ts) in the relay, so the
// main thread never stalls on it, or in this thread for the data commands and tests. At
// start-up consumers catch up from the log on disk (catch-up.ts): the events after their
// watermark and the removal records after theirs.
//
// Readers add the views of the generations after the watermark they read (generation.ts: the
// consumer builds a view from a generation's events when a reader first asks), so nothing
// committed is missed.
//
// Why batches: every LMDB key written dirties its own page for the transaction, so cost follows
// the number of distinct keys per commit. A batch of thousands of events writes each search
// token, counter or index page once instead of once per event.
import { join } from "node:path";
import { commitCause, fullReason } from "../lmdb/full.ts";
import type { BacklogState, Committed } from "../store/batch.ts";
import type { Consumer, Tail, Watermark } from "../store/consumer.ts";
import type { Removal } from "../store/removals.ts";
import type { HighWater } from "../store/serials.ts";
import { DERIVED_DIR } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import type { Applier } from "./apply.ts";
import { InThreadApplier } from "./apply.ts";
import { Backlog } from "./backlog.ts";
import type { Progress } from "./catch-up.ts";
import { catchUp } from "./catch-up.ts";
import type { Failure } from "./failures.ts";
import { ApplyFailures } from "./failures.ts";
import type { Gen } from "./generation.ts";
import type { ConsumerLag } from "./generations.ts";
import { Generations } from "./generations.ts";
import { Ticks } from "./ticks.ts";
import { RemovalTrims } from "./trims.ts";

export interface RunnerOptions {
  /** apply at least this often while events arrive */
  intervalMs: number;
  /**
   * apply as soon as no event has committed for this long (0: only on the interval), so what
   * readers must match outside the index shrinks as soon as a burst of writes ends
   */
  idleMs?: number;
  /**
   * apply as soon as the events waiting weigh this much: an event weighs one, plus one per tag
   * (each indexed tag is one more index entry, search and count records follow the same lines)
   */
  batch: number;
  /**
   * the backlog's bound: events committed and not yet applied by every consumer, and their
   * stored JSON's bytes. Past either, `backlog()` makes the writer wait (0: no bound)
   */
  maxEvents?: number;
  maxBytes?: number;
  log?: (line: string) => void;
  /** where failures go (default: `log`) */
  logError?: (line: string) => void;
  /** applies generations elsewhere (a worker thread); default: in this thread */
  applier?: Applier;
}

export class ConsumerRunner {
  private readonly gens: Generations;
  private flushing: Promise<void> | null = null;
  /** a flush was asked for while one was in flight */
  private again = false;
  private readonly trims: RemovalTrims;
  private readonly ticks: Ticks;
  private batches = 0;
  private lastApplyMs = 0;
  private diskSerial = 0;
  private readonly failures: ApplyFailures;
  private readonly log: (line: string) => void;
  private applier: Applier;
  /** the bound on what waits for the consumers, and the writer's waits at it */
  readonly backlogBound: Backlog;
  /** another process applies the consumers now (release): commits are not kept here */
  released = false;
  /** the process stops: nothing more is applied (closing) */
  private stopping = false;

  constructor(
    private readonly store: Store,
    readonly consumers: readonly Consumer[],
    private readonly o: RunnerOptions,
  ) {
    this.log = o.log ?? console.log;
    this.ticks = new Ticks(
      o.intervalMs,
      o.idleMs ?? 0,
      () => void this.flush(),
      () => this.flushSoon(),
    );
    this.failures = new ApplyFailures(join(store.path, DERIVED_DIR), this.log, o.logError ?? this.log);
    store.logRemovals = consumers.length > 0;
    this.trims = new RemovalTrims(store);
    this.gens = new Generations(store, consumers, store.lastSerial, store.lastRemoval);
    this.applier = o.applier ?? new InThreadApplier(store, consumers);
    this.backlogBound = new Backlog({ maxEvents: o.maxEvents, maxBytes: o.maxBytes }, () => ({
      events: this.waitingEvents(),
      bytes: this.waitingBytes(),
    }));
  }

  /** why the last batch failed, while the consumers cannot apply (a full disk); else undefined */
  get failure(): Failure | undefined {
    return this.failures.current;
  }

  /** batches that failed to apply since start */
  get failedBatches(): number {
    return this.failures.count;
  }

  /** Has `task` (the writer's) write the log's trims (trims.ts). */
  trimBy(task: (run: (s: Store) => unknown) => Promise<unknown>): void {
    this.trims.by(task);
  }

  /** What readers of consumer `c` see beyond a snapshot of its entries. */
  tail<V>(c: Consumer<unknown, V>): Tail<V> {
    const i = this.consumers.indexOf(c as Consumer);
    return {
      views: (w: Watermark | undefined) => this.gens.viewsAfter(i, w) as V[],
    };
  }

  /**
   * Brings every consumer up to the log on disk, synchronously (catch-up.ts). Run before the
   * writer starts, and by data commands.
   */
  catchUp(progress?: Progress, batch = 10_000, until?: HighWater): void {
    const { gen, high } = catchUp(this.store, this.consumers, this.log, progress, batch, until);
    this.trims.trimmed(high.removal);
    this.diskSerial = high.serial;
    this.gens.restart(gen, high.serial, high.removal);
  }

  /**
   * Called by the writer after each commit, in commit order; `high`: the log's high-water marks
   * after it (which may pass serials and seqs that never reach the consumers: events another
   * process added and removed between two looks).
   */
  committed(stored: readonly Committed[], removed: readonly Removal[], high?: HighWater): void {
    // None here (a data command beside the relay, which applies what it commits), or another
    // process applies them now: keep nothing.
    if (this.consumers.length === 0 || this.released) return;
    const g = this.gens.open;
    if (high) g.reaches(high);
    if (stored.length === 0 && removed.length === 0) return;
    g.take(this.consumers, stored, removed);
    const now = performance.now();
    this.ticks.lastCommitAt = now;
    const bound = this.backlogBound;
    bound.committed(stored.length, this.flushing !== null, now);
    // A batch is sealed by weight (events and their tags): every entry a batch writes may dirty
    // a page of its own, and LMDB keeps the most pages one transaction dirtied for reuse, never
    // giving them back: batches of 10,000 events held ~100 MB of them (heaptrack:
    // mdb_page_malloc) once a run of contact lists (85 tags each) had passed through.
    if (g.weight >= this.o.batch || g.live >= bound.batchEvents() || g.bytes >= bound.batchBytes())
      this.flushSoon();
    else this.ticks.armIdle();
  }

  /**
   * Asked by the writer before each batch: the bound on what waits for the consumers
   * (backlog.ts), and the writer's pace before it.
   */
  backlog(): BacklogState {
    return this.backlogBound.ask(this.failure, () => this.flushSoon());
  }

  /** Lets waiting writers go on once there is room (or the consumers fail: they refuse then). */
  private wakeWriters(): void {
    this.backlogBound.wake(this.failure !== undefined);
  }

  start(): void {
    this.ticks.start();
  }

  /** Applies the open batch now, or as soon as the batch in flight is on disk. */
  private flushSoon(): void {
    if (this.flushing) this.again = true;
    else void this.flush();
  }

  /** Seals the open batch and applies the oldest sealed one; resolves when it is on disk. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.stopping) return Promise.resolve();
    const g = this.gens.seal();
    if (!g) return Promise.resolve();
    // No room in derived/: wait for more free space (or RETRY_MS) instead of failing each tick.
    if (this.failures.waitForRoom()) return Promise.resolve();
    this.flushing = this.applyGen(g).finally(() => {
      this.flushing = null;
      // A full batch or a pause in writes that came meanwhile goes on at once while the runner
      // runs, and so does the next batch while the writer is paced (pace.ts: it is filled to be
      // ready as this one ends; waiting for the tick would leave the consumers idle); a batch
      // that failed waits for the next tick.
      const bound = this.backlogBound;
      const again = this.again || bound.waited || bound.pressedMeanwhile;
      bound.pressedMeanwhile = false;
      this.again = false;
      this.wakeWriters();
      if (again && (this.ticks.running || bound.waited) && this.gens.oldest() !== g) void this.flush();
    });
    return this.flushing;
  }

  private async applyGen(g: Gen): Promise<void> {
    const started = performance.now();
    this.backlogBound.pace.applying(g.live, started);
    let ok = false;
    try {
      await this.applier.apply(g.payload());
      ok = true;
      // Readers add the views of the generations after the watermark they read, so the read
      // after this must see the new watermark. lmdb-js keeps this thread's read transaction
      // until a timer resets it, and a commit made on the consumers' thread does not reset it:
      // a reader in the same turn of the event loop as this would read the old watermark and
      // find this generation neither on disk nor among the views (seen as a REQ one event
      // short). Bun delivers the worker's reply before a due timer, so that turn does come.
      this.store.derived.resetReadTxn();
      this.gens.applied();
      this.failures.applied(this.waitingEvents());
      this.diskSerial = g.maxSerial;
      this.batches++;
      this.lastApplyMs = performance.now() - started;
      this.failures.slow(g.live, this.lastApplyMs, this.applier.lastTook);
      // Every consumer has passed these removal records: drop them (not while the process
      // stops: the writer is draining, and the next start trims them).
      if (!this.stopping) this.trims.passed(g.maxSeq);
    } catch (e) {
      // The batch stays sealed and is tried again at the next tick, before anything newer: a
      // full disk stops the consumers, and they catch up once there is room.
      const cause = await commitCause(e);
      const full = (cause as { full?: string }).full ?? fullReason(cause, join(this.store.path, DERIVED_DIR));
      this.failures.failed(full ?? cause.message, full !== undefined, g.live, this.waitingEvents());
      // Writers waiting for room refuse their events now instead of waiting on a full disk.
      this.wakeWriters();
      if (this.applier.broken) {
        this.log("consumers: applying in this thread from now on");
        this.applier = new InThreadApplier(this.store, this.consumers);
      }
    } finally {
      this.backlogBound.pace.applied(performance.now(), ok);
    }
  }

  /** Events committed and not yet applied. */
  waitingEvents(): number {
    return this.gens.events();
  }

  /**
   * The consumers' thread, if they have one: where its time went since start (ms by step), its
   * JavaScript heap as of its last batch.
   */
  get thread(): Pick<Applier, "took" | "heap"> {
    return this.applier;
  }

  /** Bytes of stored JSON the generations waiting hold. */
  waitingBytes(): number {
    return this.gens.bytes();
  }

  /** Applies everything committed so far. */
  async settle(): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      await this.flush();
      if (this.gens.empty) return;
    }
  }

  /**
   * The process is stopping: the writer no longer waits for the consumers (what it commits from
   * now on is in the log, which the next start catches up from), and nothing more is applied
   * but the batch in flight. A stop in the middle of a burst then ends once the writer's queue
   * is committed and that batch is applied, instead of applying the whole backlog first
   * (seconds at a million events).
   */
  closing(): void {
    this.stopping = true;
    this.ticks.stop();
    this.backlogBound.close();
  }

  /**
   * Stops the timer and the applier's thread: `settle` first applies everything waiting (data
   * commands, a handover); otherwise only the batch in flight is finished, and the consumers
   * catch up from their watermarks at the next start.
   */
  async stop(settle = true): Promise<void> {
    this.ticks.stop();
    if (settle) await this.settle();
    else {
      this.stopping = true;
      await this.flushing;
    }
    await this.applier.close();
  }

  /**
   * Stops applying here, for a process that takes the directory over: everything waiting is
   * applied first (what a failing batch leaves is in the log on disk, for the next applier to
   * catch up), then the applier is closed. Commits are no longer kept; readers are given the
   * log on disk past the watermarks instead (`readFromLog`, registry.ts).
   */
  async release(readFromLog: () => void): Promise<void> {
    if (this.released) return;
    await this.stop();
    this.released = true;
    this.gens.dropAll();
    // In the same turn: no reader may find the generations gone and the log not yet read.
    readFromLog();
    this.wakeWriters();
  }

  /**
   * Applies here again after a release (the process that was to take over is gone): catches up
   * from the watermarks on disk to `until`, what the writer has handed on so far (commits after
   * it reach `committed` as usual), then runs with `applier`.
   */
  resume(applier: Applier, until: HighWater): void {
    if (!this.released) return;
    this.applier = applier;
    this.catchUp(undefined, undefined, until);
    this.released = false;
    this.start();
  }

  lag(): ConsumerLag[] {
    return this.gens.lag({
      watermark: this.diskSerial,
      batches: this.batches,
      lastApplyMs: this.lastApplyMs,
    });
  }
}
