// The single writer of a process. Accepted events from every connection are queued and committed
// in one LMDB transaction per turn; duplicates, replaceable/addressable rules, deletions and
// vanish requests are decided inside that transaction (apply-event.ts). Callers hear the outcome
// only after the batch is flushed to disk (batch.ts). Maintenance (expiry purge, the consumers'
// log trims) runs as tasks in the same queue.
//
// Other processes may write the same log (`relay import`, `relay delete` beside the relay):
// serials come from the high-water marks on disk (serials.ts), and a writer that `follows`
// reads, in each transaction, what others committed since its last one and hands it on first
// (others.ts), so `onCommitted` hears every commit to the log, in serial order, whoever made it.

import { commitCause, fullReason } from "../lmdb/full.ts";
import type { Visibility } from "../lmdb/visible.ts";
import { visibilityOf } from "../lmdb/visible.ts";
import { log } from "../log.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Reject } from "../wire/reasons.ts";
import { error } from "../wire/reasons.ts";
import type { ApplyRules } from "./apply-event.ts";
import type { BacklogState, Committed, Group, Pending, ToWrite, WriteOutcome } from "./batch.ts";
import { answer, FULL, failAll, refuseAll, refusedFull, takeTasks } from "./batch.ts";
import { batchTxn } from "./batch-txn.ts";
import { syncLog } from "./log-sync.ts";
import { NoRoom } from "./no-room.ts";
import type { Others } from "./others.ts";
import type { Removal } from "./removals.ts";
import type { HighWater } from "./serials.ts";
import { currentHighWater } from "./serials.ts";
import type { Store } from "./types.ts";

/**
 * Resolves once the store's newest commit is on disk: lmdb-js's `flushed` (its pages synced),
 * taken now, then a sync of the data file for its meta page (log-sync.ts).
 */
function flushOf(s: Store): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    s.env.flushed.then(() => resolve(), reject);
  }).then(() => syncLog(s));
}

export interface WriterOptions extends ApplyRules {
  maxBatch: number;
  /**
   * The consumers' backlog: asked before each batch, so that what waits for them stays within
   * its bound (the writer waits) whatever the length of a burst.
   */
  backlog?: () => BacklogState;
  /**
   * The disk budget's files at their bound (retention/budget.ts): events wait until this
   * resolves and is asked again, while tasks (the evictions that make room) go on.
   */
  hold?: () => Promise<void> | undefined;
  /**
   * hand on what other processes commit to the log too (the relay, whose readers, live
   * subscribers and consumers must see it); a data command beside the relay does not
   */
  follow?: boolean;
}

/** A batch that only handed on a chunk of other processes' events: it goes again. */
const AGAIN = Symbol("again");

/** How long the next batch waits for a sync in progress before it goes on without it (ms). */
const PATIENCE_MS = 3;
const noop = (): void => {};

export class Writer {
  /** Highest serial whose commit is visible to readers; REQs never answer beyond it. */
  visibleSerial: number;
  /** when the log's commits become visible to readers, ahead of their sync (visible.ts) */
  private readonly visibility: Visibility;
  /** the log's high-water marks as of this writer's last look: what onCommitted has heard */
  private known: HighWater;
  private queue: Pending[] = [];
  private running = false;
  /** set while the loop waits for a flush with nothing queued: new work shortens the wait */
  private wake: (() => void) | undefined;
  private idle: Promise<void> = Promise.resolve();
  private idleResolve: (() => void) | undefined;
  private readonly room: NoRoom;
  batches = 0;
  /** times events waited for the disk budget's files to have room (WriterOptions.hold), and for how long in all */
  readonly held = { waits: 0, ms: 0 };
  lastBatchSize = 0;
  lastCommitMs = 0;

  private readonly opts: WriterOptions;

  constructor(
    private readonly store: Store,
    opts: WriterOptions | number,
    /**
     * told, in commit order, what each batch stored and what it removed (and, when following,
     * what other processes did before it), and the log's high-water marks after it
     */
    private readonly onCommitted: (stored: Committed[], removed: Removal[], high: HighWater) => void,
  ) {
    this.opts = typeof opts === "number" ? { maxBatch: opts } : opts;
    this.visibleSerial = store.lastSerial;
    this.visibility = visibilityOf(store.env);
    this.room = new NoRoom(store.path);
    this.known = { serial: store.lastSerial, removal: store.lastRemoval };
  }

  /** storage full (full.ts): refusals, /metrics */
  get full() {
    return this.room.full;
  }

  /**
   * When another process has committed what this writer has not handed on yet: resolves once
   * it has (a reader that must see every commit made so far waits on it); else undefined.
   */
  othersAhead(): Promise<void> | undefined {
    if (!this.opts.follow) return undefined;
    const now = currentHighWater(this.store);
    if (now.serial === this.known.serial && now.removal === this.known.removal) return undefined;
    return this.task(() => undefined).then(
      () => {},
      () => {},
    );
  }

  /** The log's marks up to which this writer has handed every commit on (its own and others'). */
  heard(): HighWater {
    return { ...this.known };
  }

  /**
   * Looks whether another process has committed to the log (one read of the marks) and, if so,
   * has the writer hand it on. Cheap enough to call every fraction of a second.
   */
  poll(): void {
    if (!this.running) void this.othersAhead();
  }

  submit(event: NostrEvent, json: string): Promise<WriteOutcome> {
    return this.submitMany([{ event, json }]).then((o) => o[0]!);
  }

  /** Stores events in queue order; resolves with their outcomes once all of them are on disk. */
  submitMany(items: readonly ToWrite[]): Promise<WriteOutcome[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const group: Group = { outcomes: new Array(items.length), left: items.length, resolve };
      for (let i = 0; i < items.length; i++) {
        const { event, json } = items[i]!;
        this.queue.push({ type: "event", event, json, group, index: i });
      }
      this.start();
    });
  }

  /** Runs `run` inside a write transaction, in queue order; resolves after the commit is flushed. */
  task<T>(run: (s: Store) => T): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.enqueue({ type: "task", run, resolve: resolve as (v: unknown) => void, reject }),
    );
  }

  /** Resolves once everything submitted so far is committed and flushed. */
  drain(): Promise<void> {
    return this.running ? this.idle : Promise.resolve();
  }

  private enqueue(p: Pending): void {
    this.queue.push(p);
    this.start();
  }

  private start(): void {
    if (this.running) {
      this.wake?.();
      return;
    }
    this.running = true;
    this.idle = new Promise((r) => {
      this.idleResolve = r;
    });
    // setImmediate gathers every event that arrives in this turn of the event loop.
    setImmediate(() => void this.loop());
  }

  private async loop(): Promise<void> {
    // Work submitted while the last flush is awaited must not be stranded: look again after it.
    do await this.drainQueue();
    while (this.queue.length > 0);
    this.running = false;
    this.idleResolve?.();
  }

  private async drainQueue(): Promise<void> {
    let flushing: Promise<void> = Promise.resolve();
    while (this.queue.length > 0) {
      const room = this.opts.backlog?.();
      if (room instanceof Promise) {
        // The consumers' backlog is at its bound: what arrives meanwhile waits in the queue,
        // which ingest keeps bounded by pausing the sockets that feed it.
        await room;
        continue;
      }
      const held = this.opts.hold?.();
      const batch = held
        ? takeTasks(this.queue, this.opts.maxBatch)
        : this.queue.splice(0, this.opts.maxBatch);
      if (batch.length === 0) {
        const t = performance.now(); // a task queued meanwhile (an eviction) wakes the loop too
        this.held.waits++;
        await Promise.race([held, new Promise<void>((r) => (this.wake = r))]);
        this.wake = undefined;
        this.held.ms += performance.now() - t;
        continue;
      }
      const started = performance.now();
      const written = await this.write(batch, this.refusal(room));
      if (written === AGAIN) continue;
      const { commit } = written;
      this.room.full.refused += refusedFull(batch);
      this.batches++;
      this.lastBatchSize = batch.length;
      this.lastCommitMs = performance.now() - started;
      flushing = this.answerOnDisk(flushing, batch, commit);
      await this.settle(commit, flushing);
    }
    await flushing;
  }

  /**
   * Storage full: refuse events at once until there may be room again (full.ts); tasks and the
   * look at other processes' commits still run. So do they while the consumers cannot apply
   * what waits for them.
   */
  private refusal(room: Exclude<BacklogState, Promise<void>>): Reject | undefined {
    const full = this.room.refusing();
    if (full || !room) return full;
    return room.full
      ? error(`${FULL}derived indexes: ${room.refuse}`)
      : error(`could not store event: derived indexes cannot be written: ${room.refuse}`);
  }

  /**
   * Commits one batch and publishes it once visible. Resolves with its commit (undefined when
   * nothing was committed) as soon as it is visible, or AGAIN when the transaction only handed on other processes' events.
   */
  private async write(
    batch: Pending[],
    refusing: Reject | undefined,
  ): Promise<{ commit: Promise<void> | undefined } | typeof AGAIN> {
    if (refusing && batch.every((p) => p.type === "event")) {
      refuseAll(batch, refusing);
      return { commit: undefined };
    }
    const s = this.store;
    let committed: Promise<void> | undefined;
    try {
      const t = batchTxn(s, batch, {
        refusing,
        rules: this.opts,
        known: this.opts.follow ? this.known : undefined,
        visibility: this.visibility,
      });
      // A commit that fails before it is visible fails here; one that fails after it (its sync)
      // fails its OKs through answerOnDisk.
      await Promise.race([t.commit, t.visible]);
      committed = t.commit;
      if (t.others?.more) {
        this.queue.unshift(...batch);
        this.publish([], [], t.others);
        return AGAIN;
      }
      if (s.lastSerial !== t.marks.serial || s.lastRemoval !== t.marks.removal) this.room.wrote();
      // Committed: readers see the batch (what a REQ would return at this moment) and live
      // subscribers get it, in commit order.
      this.publish(batch, t.removed, t.others);
    } catch (e) {
      // Disk full, map full, a broken environment: nothing in this batch is stored.
      const cause = await commitCause(e);
      const reason = fullReason(cause, s.path);
      if (reason) this.room.failed(reason, batch.length);
      else log.error("write transaction failed", { items: batch.length, error: cause });
      failAll(batch, reason ? this.room.refusal() : error(`could not store event: ${cause.message}`), cause);
    }
    // (an object: an async function returning the promise itself would wait for the commit)
    return { commit: committed };
  }

  /**
   * The next batch may start while this one is flushed to disk; the OKs wait for the flush, so
   * `OK true` means on disk. The flush is taken once this commit resolves: lmdb-js's `flushed`
   * follows its newest commit, and a later one that fails is never flushed. Answers go in
   * batch order, after those of the batches before.
   */
  private answerOnDisk(
    flushing: Promise<void>,
    batch: Pending[],
    commit: Promise<void> | undefined,
  ): Promise<void> {
    const onDisk = commit ? commit.then(() => flushOf(this.store)) : Promise.resolve();
    return flushing.then(() =>
      onDisk.then(
        () => answer(batch),
        (e: unknown) => {
          log.error("flush to disk failed", { items: batch.length, error: e });
          answer(batch, e);
        },
      ),
    );
  }

  /**
   * The next batch waits for this commit's sync (inside lmdb-js's commit) and, with nothing
   * queued, for the last flush: what arrives meanwhile makes it, and batches stay large
   * (starting the next batch at once made 43% more, smaller transactions at the million). But
   * not for longer than PATIENCE_MS: a sync the disk is slow to finish (100-500 ms at its worst
   * here) then holds the OKs it covers, not the next events and their fanout.
   */
  private async settle(commit: Promise<void> | undefined, flushing: Promise<void>): Promise<void> {
    if (commit) await Promise.race([commit.then(noop, noop), Bun.sleep(PATIENCE_MS)]);
    if (this.queue.length > 0) return;
    const arrived = new Promise<void>((r) => (this.wake = r));
    await Promise.race([flushing, arrived.then(() => Bun.sleep(PATIENCE_MS))]);
    this.wake = undefined;
  }

  /** Makes a committed batch visible to readers and hands its stored events to live fanout. */
  private publish(batch: Pending[], removed: Removal[], others: Others | undefined): void {
    const s = this.store;
    // A fresh read transaction for the readers after this: lmdb-js renews its own once a commit
    // resolves, and the visibility check takes one, but other processes' events handed on by a
    // transaction that commits nothing (a chunk of them) come with neither, and a REQ must not
    // answer from a snapshot before events it takes for stored (a handover's kill -9 test lost
    // one OK'd event without this).
    s.env.resetReadTxn();
    const stored: Committed[] = others ? others.stored : [];
    const gone: Removal[] = others ? [...others.removed, ...removed] : removed;
    for (const p of batch)
      if (p.type === "event" && p.outcome?.status === "stored")
        stored.push({ event: p.event, json: p.json, serial: p.outcome.serial });
    // What this transaction wrote back (serials.ts), or the marks it opened with; or as far as
    // it read other processes' events, when it read only a chunk of them.
    this.known = others?.more ? others.through : { serial: s.lastSerial, removal: s.lastRemoval };
    if (this.opts.follow || stored.length > 0)
      this.visibleSerial = Math.max(this.visibleSerial, this.known.serial);
    if (stored.length > 0 || gone.length > 0 || others) this.onCommitted(stored, gone, this.known);
  }
}
