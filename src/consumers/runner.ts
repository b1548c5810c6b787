// Runs the consumers of the event log. The writer tells it, in commit order, what each batch
// stored and removed; it keeps that in the open batch (a "generation") and every `intervalMs`
// or `batch` events has every consumer apply the generation in one write transaction that also
// writes their watermarks: on a thread of their own (apply.ts, worker.ts) in the relay, so the
// main thread never stalls on it, or in this thread for the data commands and tests. At
// start-up consumers catch up from the log on disk: the events after their watermark and the
// removal records after theirs.
//
// Readers add the views of the generations after the watermark they read (the consumer builds
// a view from a generation's events when a reader first asks), so nothing committed is missed.
//
// Why batches: every LMDB key written dirties its own page for the transaction, so cost follows
// the number of distinct keys per commit. A batch of thousands of events writes each search
// token, counter or index page once instead of once per event.
import { join } from "node:path";
import type { Consumer, Derived, Tail, Watermark } from "../store/consumer.ts";
import { readWatermark, writeWatermark } from "../store/consumer.ts";
import { commitCause, FullState, fullReason } from "../store/full.ts";
import type { Removal } from "../store/removals.ts";
import { removalsAfter, trimRemovals } from "../store/removals.ts";
import type { HighWater } from "../store/serials.ts";
import { currentHighWater } from "../store/serials.ts";
import type { Store } from "../store/store.ts";
import { DERIVED_DIR, replayStored } from "../store/store.ts";
import type { Committed } from "../store/writer.ts";
import type { Applier, GenPayload } from "./apply.ts";
import { InThreadApplier } from "./apply.ts";

interface Item {
  serial: number;
  event: Committed["event"];
  json: string;
  dropped: boolean;
  /** its position in the generation's adds */
  at: number;
  /** what each consumer derived, once a view or the in-thread applier needed it */
  ps?: unknown[];
}

interface RemovedItem {
  seq: number;
  serial: number;
  event: Committed["event"];
  json: string;
  ps?: unknown[];
}

/** One batch of the log, from the end of the previous one to `maxSerial` / `maxSeq`. */
class Gen {
  readonly adds: Item[] = [];
  readonly bySerial = new Map<number, Item>();
  readonly removes: RemovedItem[] = [];
  /** per consumer: its view, and how many adds and removes it covers */
  readonly views: unknown[];
  readonly addsSeen: number[];
  readonly removesSeen: number[];
  /** per consumer: its view is being built (a listener reads the views meanwhile) */
  readonly building: boolean[];
  /** events in the batch that are not dropped */
  live = 0;
  /** when the first item arrived (ms), for lag */
  firstAt = 0;

  constructor(
    readonly n: number,
    consumers: readonly Consumer[],
    public maxSerial: number,
    public maxSeq: number,
  ) {
    this.views = consumers.map(() => undefined);
    this.addsSeen = consumers.map(() => 0);
    this.removesSeen = consumers.map(() => 0);
    this.building = consumers.map(() => false);
  }

  get empty(): boolean {
    return this.adds.length === 0 && this.removes.length === 0;
  }

  payload(): GenPayload {
    const adds = new Float64Array(this.live);
    let k = 0;
    for (const a of this.adds) if (!a.dropped) adds[k++] = a.serial;
    return {
      n: this.n,
      maxSerial: this.maxSerial,
      maxSeq: this.maxSeq,
      adds,
      removes: Float64Array.from(this.removes, (r) => r.seq),
    };
  }
}

export interface RunnerOptions {
  /** apply at least this often while events arrive */
  intervalMs: number;
  /**
   * apply as soon as no event has committed for this long (0: only on the interval), so what
   * readers must match outside the index shrinks as soon as a burst of writes ends
   */
  idleMs?: number;
  /** apply as soon as this many events wait */
  batch: number;
  log?: (line: string) => void;
  /** where failures go (default: `log`) */
  logError?: (line: string) => void;
  /** applies generations elsewhere (a worker thread); default: in this thread */
  applier?: Applier;
}

/** A failing consumer batch is logged again at most this often. */
const FAILURE_LOG_MS = 60_000;

export interface ConsumerLag {
  name: string;
  /** events committed and not yet applied */
  events: number;
  /** age of the oldest of them */
  seconds: number;
  /** serial up to which the entries are on disk */
  watermark: number;
  /** batches applied since start, and the last one's duration */
  batches: number;
  lastApplyMs: number;
}

/** What consumer `i` derived from an item, computed once. */
function derived(cs: readonly Consumer[], it: Item | RemovedItem, i: number): unknown {
  it.ps ??= new Array(cs.length);
  if (it.ps[i] === undefined) it.ps[i] = cs[i]!.prepare(it.event);
  return it.ps[i];
}

export class ConsumerRunner {
  private open: Gen;
  private readonly sealed: Gen[] = [];
  private flushing: Promise<void> | null = null;
  /** a flush was asked for while one was in flight */
  private again = false;
  /** removal records up to this seq are trimmed (or asked to be) */
  private trimmedThrough = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private lastCommitAt = 0;
  private batches = 0;
  private lastApplyMs = 0;
  private diskSerial = 0;
  /** why the last batch failed, while the consumers cannot apply (a full disk); else undefined */
  failure: { reason: string; full: boolean; since: number; loggedAt: number } | undefined;
  /** free space of derived/ when a batch failed for lack of room, to know when to try again */
  private readonly room: FullState;
  /** batches that failed to apply since start */
  failedBatches = 0;
  private readonly log: (line: string) => void;
  private applier: Applier;

  constructor(
    private readonly store: Store,
    readonly consumers: readonly Consumer[],
    private readonly o: RunnerOptions,
  ) {
    this.log = o.log ?? console.log;
    this.room = new FullState(join(store.path, DERIVED_DIR));
    store.logRemovals = consumers.length > 0;
    this.open = new Gen(1, consumers, store.lastSerial, store.lastRemoval);
    this.applier = o.applier ?? new InThreadApplier(store, consumers);
  }

  /** What readers of consumer `c` see beyond a snapshot of its entries. */
  tail<V>(c: Consumer<unknown, V>): Tail<V> {
    const i = this.consumers.indexOf(c as Consumer);
    return {
      views: (w: Watermark | undefined) => {
        const out: V[] = [];
        for (const g of this.sealed) if (!w || g.n > w.gen) out.push(this.viewOf(g, i) as V);
        if (!w || this.open.n > w.gen) out.push(this.viewOf(this.open, i) as V);
        return out;
      },
    };
  }

  /**
   * Consumer i's view of a generation, brought up to its latest items. A listener that reads
   * the views while this one is being built (the trending window asking the counters for a
   * note's counts) gets it as built so far: the outer call goes on with the rest, where a
   * nested one would recurse once per item (a stack overflow on a batch of thousands).
   */
  private viewOf(g: Gen, i: number): unknown {
    const c = this.consumers[i]!;
    g.views[i] ??= c.newView();
    const v = g.views[i];
    if (g.building[i]) return v;
    g.building[i] = true;
    try {
      while (g.addsSeen[i]! < g.adds.length) {
        const a = g.adds[g.addsSeen[i]!++]!;
        if (a.dropped) continue;
        const p = derived(this.consumers, a, i);
        if (p !== null) c.view(v, { serial: a.serial, p }, 1, false);
      }
      while (g.removesSeen[i]! < g.removes.length) {
        const r = g.removes[g.removesSeen[i]!++]!;
        const p = derived(this.consumers, r, i);
        if (p !== null) c.view(v, { serial: r.serial, p }, 1, true);
      }
    } finally {
      g.building[i] = false;
    }
    return v;
  }

  /**
   * Brings every consumer up to the log on disk (rebuilding those whose entries are missing or
   * of another version), synchronously. Run before the writer starts, and by data commands.
   * Covers the log up to the high-water marks read when it starts, which it leaves in
   * `store.lastSerial` and `store.lastRemoval`: what another process commits meanwhile is for
   * the writer to notice (writer.ts), so nothing is applied twice.
   */
  catchUp(progress?: (name: string, events: number, total: number) => void, batch = 10_000): void {
    const s = this.store;
    const high = currentHighWater(s);
    s.lastSerial = high.serial;
    s.lastRemoval = high.removal;
    let gen = 0;
    for (const c of this.consumers) {
      let w = readWatermark(s, c.name);
      if (!w && c.adopt?.(s)) {
        const adopted: Watermark = {
          version: c.version,
          gen: 0,
          serial: high.serial,
          removal: high.removal,
        };
        s.derived.transactionSync(() => writeWatermark(s, c.name, adopted));
        w = adopted;
      }
      // A watermark past the log's high-water marks belongs to another log (a data.mdb restored
      // under a newer derived/): its entries cover events this log never had, and the events
      // that get those serials here would be skipped. Rebuilt like a change of version.
      const foreign = w !== undefined && (w.serial > high.serial || w.removal > high.removal);
      if (foreign)
        this.log(
          `${c.name}: its entries go beyond this log (serial ${w!.serial} > ${high.serial}); rebuilding`,
        );
      const rebuild = !w || w.version !== c.version || foreign;
      const started = performance.now();
      if (rebuild) {
        const fresh: Watermark = { version: c.version, gen: w?.gen ?? 0, serial: 0, removal: high.removal };
        s.derived.transactionSync(() => {
          c.clear(s);
          writeWatermark(s, c.name, fresh);
        });
        w = fresh;
      }
      const events = this.replay(c, w!, high, batch, progress);
      if (rebuild && events > 0)
        this.log(
          `${c.name}: built from ${events} stored events in ${Math.round(performance.now() - started)} ms`,
        );
      gen = Math.max(gen, w!.gen);
    }
    if (this.consumers.length > 0) s.env.transactionSync(() => trimRemovals(s.removals, high.removal));
    this.trimmedThrough = high.removal;
    this.diskSerial = high.serial;
    this.open = new Gen(gen + 1, this.consumers, high.serial, high.removal);
  }

  /**
   * Applies the log after `w` from disk: removal records first, then stored events in batches.
   * Returns how many stored events it read.
   */
  private replay(
    c: Consumer,
    w: Watermark,
    high: HighWater,
    batch: number,
    progress?: (name: string, events: number, total: number) => void,
  ): number {
    const s = this.store;
    const removes: Derived<unknown>[] = [];
    // A removal undoes an event only if an earlier batch applied it; an event removed before its
    // batch was applied has no body left, so it is not applied either.
    for (const r of removalsAfter(s.removals, w.removal)) {
      if (r.seq > high.removal) break;
      if (r.serial <= w.serial) {
        const p = c.prepare(r.event);
        if (p !== null) removes.push({ serial: r.serial, p });
      }
    }
    const total = high.serial - w.serial;
    let adds: Derived<unknown>[] = [];
    let through = w.serial;
    // The last batch covers the marks even when the newest events were removed since.
    let read = 0;
    return replayStored(
      s,
      w.serial + 1,
      high.serial,
      batch,
      (e, serial) => {
        through = serial;
        read++;
        const p = c.prepare(e);
        if (p !== null) adds.push({ serial, p });
      },
      () => {
        const last = read < batch;
        read = 0;
        c.apply(s, adds, removes.splice(0));
        adds = [];
        writeWatermark(s, c.name, { ...w, serial: last ? high.serial : through, removal: high.removal });
      },
      (n) => progress?.(c.name, n, total),
    );
  }

  /**
   * Called by the writer after each commit, in commit order; `high`: the log's high-water marks
   * after it (which may pass serials and seqs that never reach the consumers: events another
   * process added and removed between two looks).
   */
  committed(stored: readonly Committed[], removed: readonly Removal[], high?: HighWater): void {
    // None here (a data command beside the relay, which applies what it commits): keep nothing.
    if (this.consumers.length === 0) return;
    const g = this.open;
    const cs = this.consumers;
    if (high) {
      if (high.serial > g.maxSerial) g.maxSerial = high.serial;
      if (high.removal > g.maxSeq) g.maxSeq = high.removal;
    }
    if (stored.length === 0 && removed.length === 0) return;
    if (g.firstAt === 0) g.firstAt = performance.now();
    for (const c of cs) {
      if (!c.hear) continue;
      for (const x of stored) c.hear(x.event, x.serial, 1);
      for (const r of removed) c.hear(r.event, r.serial, -1);
    }
    for (const c of stored) {
      const item: Item = {
        serial: c.serial,
        event: c.event,
        json: c.json,
        dropped: false,
        at: g.adds.length,
      };
      g.adds.push(item);
      g.bySerial.set(c.serial, item);
      g.live++;
      if (c.serial > g.maxSerial) g.maxSerial = c.serial;
    }
    for (const r of removed) {
      if (r.seq > g.maxSeq) g.maxSeq = r.seq;
      const added = g.bySerial.get(r.serial);
      if (added) {
        // Added and removed in the same batch: neither is applied. Views built past it forget it.
        added.dropped = true;
        g.bySerial.delete(r.serial);
        g.live--;
        for (let i = 0; i < cs.length; i++) {
          if (g.views[i] === undefined || added.at >= g.addsSeen[i]!) continue;
          const p = derived(cs, added, i);
          if (p !== null) cs[i]!.view(g.views[i], { serial: r.serial, p }, -1, false);
        }
        continue;
      }
      g.removes.push({ seq: r.seq, serial: r.serial, event: r.event, json: r.json });
    }
    this.lastCommitAt = performance.now();
    if (g.live >= this.o.batch) this.flushSoon();
    else this.armIdle();
  }

  /** Applies the open batch once writes pause for `idleMs` (checked, not re-armed per commit). */
  private armIdle(): void {
    const idle = this.o.idleMs ?? 0;
    if (idle <= 0 || this.idleTimer || !this.timer) return;
    const check = () => {
      const quiet = performance.now() - this.lastCommitAt;
      if (quiet < idle) {
        this.idleTimer = setTimeout(check, idle - quiet);
        return;
      }
      this.idleTimer = undefined;
      this.flushSoon();
    };
    this.idleTimer = setTimeout(check, idle);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.o.intervalMs);
  }

  /** Applies the open batch now, or as soon as the batch in flight is on disk. */
  private flushSoon(): void {
    if (this.flushing) this.again = true;
    else void this.flush();
  }

  /** Seals the open batch and applies the oldest sealed one; resolves when it is on disk. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.open.empty) {
      this.sealed.push(this.open);
      const prev = this.open;
      this.open = new Gen(prev.n + 1, this.consumers, prev.maxSerial, prev.maxSeq);
    }
    const g = this.sealed[0];
    if (!g) return Promise.resolve();
    // No room in derived/: wait for more free space (or RETRY_MS) instead of failing each tick.
    if (this.failure?.full && !this.room.shouldTry()) return Promise.resolve();
    this.flushing = this.applyGen(g).finally(() => {
      this.flushing = null;
      // A full batch or a pause in writes that came meanwhile goes on at once while the runner
      // runs; a batch that failed waits for the next tick.
      const again = this.again;
      this.again = false;
      if (again && this.timer && this.sealed[0] !== g) void this.flush();
    });
    return this.flushing;
  }

  private async applyGen(g: Gen): Promise<void> {
    const started = performance.now();
    try {
      await this.applier.apply(g.payload(), (i) => ({
        adds: g.adds
          .filter((a) => !a.dropped)
          .map((a) => ({ serial: a.serial, p: derived(this.consumers, a, i) })),
        removes: g.removes.map((r) => ({ serial: r.serial, p: derived(this.consumers, r, i) })),
      }));
      this.sealed.shift();
      if (this.failure) {
        const seconds = Math.round((Date.now() - this.failure.since) / 1000);
        this.log(
          `consumers: applying again after ${seconds} s of failures, ${this.lagEvents()} events to catch up`,
        );
        this.failure = undefined;
        this.room.cleared();
      }
      this.diskSerial = g.maxSerial;
      this.batches++;
      this.lastApplyMs = performance.now() - started;
      // Every consumer has passed these removal records: drop them (a write transaction on the
      // log, so only when there are some; otherwise it would delay the writer's next batch).
      const through = g.maxSeq;
      if (through > this.trimmedThrough) {
        this.trimmedThrough = through;
        void this.store.env
          .transaction(() => trimRemovals(this.store.removals, through))
          .catch((e: unknown) => commitCause(e));
      }
    } catch (e) {
      // The batch stays sealed and is tried again at the next tick, before anything newer: a
      // full disk stops the consumers, and they catch up once there is room.
      const cause = await commitCause(e);
      const full = (cause as { full?: string }).full ?? fullReason(cause, join(this.store.path, DERIVED_DIR));
      this.failing(full ?? cause.message, full !== undefined, g.live);
      if (this.applier.broken) {
        this.log("consumers: applying in this thread from now on");
        this.applier = new InThreadApplier(this.store, this.consumers);
      }
    }
  }

  /** A batch failed: say so at once, then at most once a minute while it goes on failing. */
  private failing(reason: string, full: boolean, events: number): void {
    const now = Date.now();
    const was = this.failure;
    this.failure = { reason, full, since: was?.since ?? now, loggedAt: was?.loggedAt ?? 0 };
    if (full) this.room.failed(reason, now);
    this.failedBatches++;
    if (now - this.failure.loggedAt < FAILURE_LOG_MS) return;
    this.failure.loggedAt = now;
    const what = full ? `storage full: ${reason}` : reason;
    (this.o.logError ?? this.log)(
      was
        ? `consumers: still failing since ${new Date(was.since).toISOString()}, ${this.lagEvents()} events waiting: ${what}`
        : `consumers: could not apply a batch of ${events} events, trying again: ${what}`,
    );
  }

  /** Events committed and not yet applied. */
  private lagEvents(): number {
    let n = this.open.live;
    for (const g of this.sealed) n += g.live;
    return n;
  }

  /** Applies everything committed so far. */
  async settle(): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      await this.flush();
      if (this.sealed.length === 0 && this.open.empty) return;
    }
  }

  /** Applies everything waiting, then stops the timer and the applier's thread. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    await this.settle();
    await this.applier.close();
  }

  lag(): ConsumerLag[] {
    const gens = [...this.sealed, this.open];
    let events = 0;
    let first = 0;
    for (const g of gens) {
      events += g.live;
      if (g.firstAt > 0 && (first === 0 || g.firstAt < first)) first = g.firstAt;
    }
    const seconds = events > 0 && first > 0 ? (performance.now() - first) / 1000 : 0;
    return this.consumers.map((c) => ({
      name: c.name,
      events,
      seconds,
      watermark: this.diskSerial,
      batches: this.batches,
      lastApplyMs: this.lastApplyMs,
    }));
  }
}
