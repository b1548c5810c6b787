// The single writer of a process. Accepted events from every connection are queued and committed
// in one LMDB transaction per turn; duplicates, replaceable/addressable rules, deletions and
// vanish requests are decided inside that transaction. Callers hear the outcome only after the
// batch is flushed to disk. Maintenance (expiry purge) runs as tasks in the same queue.
//
// Other processes may write the same log (`relay import`, `relay delete` beside the relay):
// serials come from the high-water marks on disk (serials.ts), and a writer that `follows`
// reads, in each transaction, what others committed since its last one and hands it on first,
// so `onCommitted` hears every commit to the log, in serial order, whoever made it.

import { commitCause, FullState, fullReason } from "../lmdb/full.ts";
import type { Visibility } from "../lmdb/visible.ts";
import { visibilityOf } from "../lmdb/visible.ts";
import { log, Throttle } from "../log.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { isAddressable, isReplaceable } from "../nostr/kinds.ts";
import type { Reject } from "../wire/reasons.ts";
import { error, olderVersion } from "../wire/reasons.ts";
import { readReplaceable, readU64, replaceableValue, serialKey } from "./keys.ts";
import {
  addressOf,
  applyDeletion,
  applyVanish,
  removeBySerial,
  tombstoned,
  vanishTargetsUs,
} from "./lifecycle.ts";
import { syncLog } from "./log-sync.ts";
import type { Removal } from "./removals.ts";
import { removalsAfter } from "./removals.ts";
import type { HighWater } from "./serials.ts";
import { commitTxn, currentHighWater, readHighWater } from "./serials.ts";
import { putEvent } from "./store.ts";
import type { Store } from "./types.ts";

/** The start of every refusal for lack of room (after `error: `). */
export const FULL = "storage full: ";
/** A full writer logs again at most this often. */
const FULL_LOG_MS = 60_000;

/**
 * Resolves once the store's newest commit is on disk: lmdb-js's `flushed` (its pages synced),
 * taken now, then a sync of the data file for its meta page (log-sync.ts).
 */
function flushOf(s: Store): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    s.env.flushed.then(() => resolve(), reject);
  }).then(() => syncLog(s));
}

export type WriteOutcome =
  | { status: "stored"; serial: number; replaced: boolean }
  | { status: "duplicate" }
  | { status: "rejected"; reject: Reject };

export interface Committed {
  event: NostrEvent;
  json: string;
  serial: number;
}

/** Events submitted together, answered together once every one of them is on disk. */
interface Group {
  outcomes: WriteOutcome[];
  left: number;
  resolve: (o: WriteOutcome[]) => void;
}

/** An event to store and its stored JSON. */
export interface ToWrite {
  event: NostrEvent;
  json: string;
}

type Pending =
  | {
      type: "event";
      event: NostrEvent;
      json: string;
      group: Group;
      index: number;
      outcome?: WriteOutcome;
    }
  | {
      type: "task";
      run: (s: Store) => unknown;
      resolve: (v: unknown) => void;
      reject: (e: unknown) => void;
      result?: unknown;
      failed?: unknown;
    };

/** What bounds the writer from outside before each batch (consumers/runner.ts `backlog`). */
export type BacklogState =
  /** room: write */
  | undefined
  /** full: write once this resolves */
  | Promise<void>
  /** full, and it cannot drain (the consumers' disk is full): refuse events for this reason */
  | { refuse: string; full: boolean };

export interface WriterOptions {
  maxBatch: number;
  /**
   * The consumers' backlog: asked before each batch, so that what waits for them stays within
   * its bound (the writer waits) whatever the length of a burst.
   */
  backlog?: () => BacklogState;
  /** whether a NIP-62 `relay` tag names this relay */
  isOwnUrl?: (url: string) => boolean;
  /**
   * Refusals decided in queue order (NIP-86 bans): a ban applied by a task refuses every event
   * behind it in the queue, even one that passed the write policy before the ban.
   */
  refuse?: (e: NostrEvent) => Reject | undefined;
  /**
   * hand on what other processes commit to the log too (the relay, whose readers, live
   * subscribers and consumers must see it); a data command beside the relay does not
   */
  follow?: boolean;
}

/** What other processes committed between two transactions of this one. */
interface Others {
  stored: Committed[];
  removed: Removal[];
  /** how far they were read: the marks the transaction opened with, or less (`more`) */
  through: HighWater;
  /** more of their events wait past `through.serial`, for the next transactions */
  more: boolean;
}

/**
 * Events of other processes handed on per transaction, at most. A `relay import` beside the
 * relay commits as fast as it can; read in one go, its million events would all wait in the
 * consumers' backlog at once (parsed, with their JSON), past its bound. In chunks, the writer
 * asks for room before each one, as it does before its own batches.
 */
export const OTHERS_CHUNK = 2048;

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
  /** storage full (full.ts): refusals, /metrics */
  readonly full: FullState;
  private readonly fullLog = new Throttle(FULL_LOG_MS);
  batches = 0;
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
    this.full = new FullState(store.path);
    this.known = { serial: store.lastSerial, removal: store.lastRemoval };
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
    const s = this.store;
    let flushing: Promise<void> = Promise.resolve();
    while (this.queue.length > 0) {
      const room = this.opts.backlog?.();
      if (room instanceof Promise) {
        // The consumers' backlog is at its bound: what arrives meanwhile waits in the queue,
        // which ingest keeps bounded by pausing the sockets that feed it.
        await room;
        continue;
      }
      const batch = this.queue.splice(0, this.opts.maxBatch);
      const started = performance.now();
      let removed: Removal[] = [];
      let others: Others | undefined;
      // Storage full: refuse events at once until there may be room again (full.ts); tasks and
      // the look at other processes' commits still run. So do they while the consumers cannot
      // apply what waits for them.
      const refusing =
        this.full.full && !this.full.shouldTry()
          ? this.storageFull()
          : room
            ? room.full
              ? error(`${FULL}derived indexes: ${room.refuse}`)
              : error(`could not store event: derived indexes cannot be written: ${room.refuse}`)
            : undefined;
      let committed = false;
      let commit: Promise<void> | undefined;
      try {
        if (refusing && batch.every((p) => p.type === "event")) {
          for (const p of batch) if (p.type === "event") p.outcome = { status: "rejected", reject: refusing };
        } else {
          const marks = { serial: s.lastSerial, removal: s.lastRemoval };
          // One transaction and one commit per batch: every put of the batch is made here.
          // Published once visible to readers (visible.ts), which may come before the commit's
          // promise resolves; durable (and answered) after it and syncLog, below.
          let shown!: () => void;
          const visible = new Promise<void>((r) => (shown = r));
          let unwatch = noop;
          commit = commitTxn(s, (before) => {
            s.arena.reset();
            s.removedInTxn = [];
            marks.serial = before.serial;
            marks.removal = before.removal;
            others = this.opts.follow ? this.othersSince(before) : undefined;
            // This transaction only hands on a chunk of other processes' events: its own batch
            // waits for the one that reads the rest (its serials must follow theirs).
            if (others?.more) return;
            try {
              for (const p of batch) {
                if (p.type === "event")
                  p.outcome = refusing
                    ? { status: "rejected", reject: refusing }
                    : this.apply(p.event, p.json);
                else
                  try {
                    p.result = p.run(s);
                  } catch (e) {
                    p.failed = e ?? new Error("task failed");
                  }
              }
            } finally {
              removed = s.removedInTxn;
              s.removedInTxn = [];
              // Published early only once a fresh read sees this transaction's marks.
              const through = { serial: s.lastSerial, removal: s.lastRemoval };
              unwatch = this.visibility.whenVisible(shown, () => {
                const h = readHighWater(s);
                return h.serial >= through.serial && h.removal >= through.removal;
              });
            }
          });
          // Its watch ends with it (resolved or failed): a later report is another transaction's.
          commit.then(
            () => unwatch(),
            () => unwatch(),
          );
          // A commit that fails before it is visible fails here; one that fails after it (its
          // sync) fails its OKs through onDisk below.
          await Promise.race([commit, visible]);
          committed = true;
          if (others?.more) {
            this.queue.unshift(...batch);
            this.publish([], [], others);
            continue;
          }
          // Room again once a commit that wrote to the log went through.
          if (this.full.full && (s.lastSerial !== marks.serial || s.lastRemoval !== marks.removal))
            this.roomAgain();
          // Committed: readers see the batch (what a REQ would return at this moment) and live
          // subscribers get it, in commit order.
          this.publish(batch, removed, others);
        }
      } catch (e) {
        // Disk full, map full, a broken environment: nothing in this batch is stored.
        const cause = await commitCause(e);
        const reason = fullReason(cause, s.path);
        if (reason) this.noRoom(reason, batch.length);
        else log.error("write transaction failed", { items: batch.length, error: cause });
        const r = reason ? this.storageFull() : error(`could not store event: ${cause.message}`);
        for (const p of batch) {
          if (p.type === "event") p.outcome = { status: "rejected", reject: r };
          else p.failed = cause;
        }
      }
      for (const p of batch)
        if (
          p.type === "event" &&
          p.outcome?.status === "rejected" &&
          p.outcome.reject.message.startsWith(FULL)
        )
          this.full.refused++;
      this.batches++;
      this.lastBatchSize = batch.length;
      this.lastCommitMs = performance.now() - started;
      // The next batch may start while this one is flushed to disk; the OKs wait for the flush,
      // so `OK true` means on disk. The flush is taken once this commit resolves: lmdb-js's
      // `flushed` follows its newest commit, and a later one that fails is never flushed.
      const onDisk = committed && commit ? commit.then(() => flushOf(s)) : Promise.resolve();
      const prev = flushing;
      flushing = prev.then(() =>
        onDisk.then(
          () => this.answer(batch),
          (e: unknown) => this.answer(batch, e),
        ),
      );
      // The next batch waits for this commit's sync (inside lmdb-js's commit) and, with nothing
      // queued, for the last flush: what arrives meanwhile makes it, and batches stay large
      // (starting the next batch at once made 43% more, smaller transactions at the million).
      // But not for longer than PATIENCE_MS: a sync the disk is slow to finish (100-500 ms at
      // its worst here) then holds the OKs it covers, not the next events and their fanout.
      if (commit) await Promise.race([commit.then(noop, noop), Bun.sleep(PATIENCE_MS)]);
      if (this.queue.length === 0) {
        const arrived = new Promise<void>((r) => (this.wake = r));
        await Promise.race([flushing, arrived.then(() => Bun.sleep(PATIENCE_MS))]);
        this.wake = undefined;
      }
    }
    await flushing;
  }

  /** The refusal while storage is full. */
  private storageFull(): Reject {
    return error(`${FULL}${this.full.reason ?? "no room left"}`);
  }

  /** A commit failed for lack of room: log it at once, then at most once a minute. */
  private noRoom(reason: string, items: number): void {
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

  private roomAgain(): void {
    const seconds = Math.round((Date.now() - this.full.since) / 1000);
    log.info("storage has room again, writes accepted", { seconds, refused: this.full.refused });
    this.full.cleared();
    this.fullLog.reset();
  }

  /**
   * What other processes committed since this writer's last look, read in its transaction
   * (`now`: the marks it opened with). An event they added and removed in between is in
   * neither list: nobody here saw it. Tells the writer's own indexers (NIP-40 expiry) too.
   */
  private othersSince(now: HighWater): Others | undefined {
    const s = this.store;
    const known = this.known;
    if (now.serial === known.serial && now.removal === known.removal) return undefined;
    const stored: Committed[] = [];
    const range = { start: serialKey(known.serial + 1), end: serialKey(now.serial + 1), limit: OTHERS_CHUNK };
    for (const { key, value } of s.eventsText.getRange(range)) {
      const json = value as string;
      const c: Committed = { event: JSON.parse(json) as NostrEvent, json, serial: readU64(key as Buffer, 0) };
      stored.push(c);
      for (const ix of s.indexers) ix.seen(c.event, c.serial, true);
    }
    const removed: Removal[] = [];
    for (const r of removalsAfter(s.removals, known.removal)) {
      if (r.seq > now.removal) break;
      if (r.serial > known.serial) continue;
      removed.push(r);
      for (const ix of s.indexers) ix.seen(r.event, r.serial, false);
    }
    // Removals of events past `through` need no record here: those events are gone from the
    // log, so the next chunk never reads them.
    const more = stored.length === OTHERS_CHUNK && stored[stored.length - 1]!.serial < now.serial;
    const through = more ? { serial: stored[stored.length - 1]!.serial, removal: now.removal } : now;
    return { stored, removed, through, more };
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

  /**
   * Answers every submitter of a batch that is on disk. When its flush to disk failed
   * (`flushFailed`), what it stored is not acknowledged: those events get `error:`.
   */
  private answer(batch: Pending[], flushFailed?: unknown): void {
    const failed = flushFailed !== undefined;
    if (failed) log.error("flush to disk failed", { items: batch.length, error: flushFailed });
    const notOnDisk = error(`could not flush to disk: ${(flushFailed as Error | undefined)?.message}`);
    for (const p of batch) {
      if (p.type === "task") {
        if (p.failed !== undefined) p.reject(p.failed);
        else if (failed) p.reject(flushFailed);
        else p.resolve(p.result);
      } else {
        const g = p.group;
        let o: WriteOutcome = p.outcome ?? { status: "rejected", reject: error("not written") };
        if (failed && o.status === "stored") o = { status: "rejected", reject: notOnDisk };
        g.outcomes[p.index] = o;
        if (--g.left === 0) g.resolve(g.outcomes);
      }
    }
  }

  /** Runs inside the write transaction. */
  private apply(e: NostrEvent, json: string): WriteOutcome {
    const s = this.store;
    const refused = this.opts.refuse?.(e);
    if (refused) return { status: "rejected", reject: refused };
    if (s.ids.getBinaryFast(s.arena.hex32(e.id)) !== undefined) return { status: "duplicate" };
    const addressed = isReplaceable(e.kind) || isAddressable(e.kind);
    const rkey = addressed ? addressOf(e) : undefined;
    const gone = tombstoned(s, e, rkey);
    if (gone) return { status: "rejected", reject: gone };

    const serial = s.lastSerial + 1;
    let replaced = false;
    if (rkey) {
      const cur = s.replaceable.get(rkey);
      if (cur !== undefined) {
        const old = readReplaceable(cur);
        // Newest wins; on equal created_at the lowest id wins (NIP-01).
        if (old.createdAt > e.created_at || (old.createdAt === e.created_at && old.id < e.id))
          return { status: "rejected", reject: olderVersion() };
        removeBySerial(s, old.serial);
        replaced = true;
      }
      s.replaceable.put(rkey, replaceableValue(serial, e.created_at, e.id));
    }
    // A vanish request removes what came before it, then is kept for bookkeeping.
    if (e.kind === 62 && this.opts.isOwnUrl && vanishTargetsUs(e, this.opts.isOwnUrl)) applyVanish(s, e);
    s.lastSerial = serial;
    putEvent(s, e, json, serial);
    if (e.kind === 5) applyDeletion(s, e);
    return { status: "stored", serial, replaced };
  }
}
