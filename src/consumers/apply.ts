// Applying one generation of the log to every consumer, in one write transaction of the derived
// environment that also writes their watermarks: in this thread (data commands, tests, and the
// fallback), or on the consumers' own thread (worker.ts) in the relay.
import { Worker } from "node:worker_threads";
import type { WalkReply, WalkRequest } from "../search/remote.ts";
import type { Consumer, Prepared } from "../store/consumer.ts";
import { readWatermark, writeWatermark } from "../store/consumer.ts";
import type { Store } from "../store/types.ts";

/**
 * A generation as it crosses to another thread: the serials of its events and the seqs of its
 * removal records, which that thread reads from the log itself (a copy of every event's JSON
 * cost the main thread ~10 µs an event to clone).
 */
export interface GenPayload {
  n: number;
  maxSerial: number;
  maxSeq: number;
  adds: Float64Array;
  removes: Float64Array;
}

/** Consumer i's share of a generation: what it derived from each event. */
export type Share = (i: number) => { adds: Prepared<unknown>[]; removes: Prepared<unknown>[] };

export interface Applier {
  /** Applies a generation; resolves once it is committed. */
  apply(g: GenPayload, share: Share): Promise<void>;
  close(): Promise<void>;
  /** set when the applier can apply nothing more (its thread died) */
  readonly broken?: boolean;
  /** its thread's JavaScript heap, when it has a thread of its own */
  readonly heap?: { size: number; capacity: number };
  /** where its thread's time went, when it has one (ms by step, summed) */
  readonly took?: Timings;
}

/**
 * Every consumer's share of a generation, derived before the write transaction opens: LMDB has
 * one writer, and the relay's writer waits while a batch holds the lock.
 */
export function shares(consumers: readonly Consumer[], share: Share): ReturnType<Share>[] {
  return consumers.map((_, i) => {
    const { adds, removes } = share(i);
    return { adds: adds.filter(notNull), removes: removes.filter(notNull) };
  });
}

/**
 * Applies every consumer's share with its watermark in the derived environment: the consumers
 * that read what they write in one transaction (synchronous here when `sync`), then the
 * writes-only ones as asynchronous writes issued in one turn, which lmdb-js commits as one
 * batch with their watermarks. Resolves once everything is committed.
 */
export async function applyShares(
  s: Store,
  consumers: readonly Consumer[],
  g: GenPayload,
  ready: readonly ReturnType<Share>[],
  sync: boolean,
  took: Timings = {},
): Promise<void> {
  // A generation is sent again after a failure, and part of it may be on disk by then: the
  // consumers of the transaction, when only the writes-only commit failed. Applied twice,
  // counters would count twice; so each consumer applies a generation once, as its watermark
  // (read in the write transaction, or in a read transaction begun after every commit) says.
  const pending = (c: Consumer) => (readWatermark(s, c.name)?.gen ?? 0) < g.n;
  const applyOne = (c: Consumer, i: number): unknown => {
    const t = performance.now();
    c.apply(s, ready[i]!.adds, ready[i]!.removes);
    const w = writeWatermark(s, c.name, {
      version: c.version,
      gen: g.n,
      serial: g.maxSerial,
      removal: g.maxSeq,
    });
    addTime(took, `${c.name}.apply`, t);
    return w;
  };
  const inTxn = () =>
    consumers.forEach((c, i) => {
      if (!c.writesOnly && pending(c)) applyOne(c, i);
    });
  let t = performance.now();
  if (consumers.some((c) => !c.writesOnly)) {
    if (sync) s.derived.transactionSync(inTxn);
    else await s.derived.transaction(inTxn);
  }
  addTime(took, "transaction", t);
  // The writes-only consumers' watermarks were written by the write thread: a fresh read.
  s.derived.resetReadTxn();
  let last: unknown;
  consumers.forEach((c, i) => {
    if (c.writesOnly && pending(c)) last = applyOne(c, i);
  });
  t = performance.now();
  await last;
  addTime(took, "async commit", t);
}

/** Milliseconds a batch spent in each step, by name (`<consumer>.prepare`, `<consumer>.apply`…). */
export type Timings = Record<string, number>;

export function addTime(took: Timings, step: string, since: number): void {
  took[step] = (took[step] ?? 0) + performance.now() - since;
}

const notNull = (d: Prepared<unknown>): boolean => d.p !== null;

export class InThreadApplier implements Applier {
  constructor(
    private readonly s: Store,
    private readonly consumers: readonly Consumer[],
  ) {}

  async apply(g: GenPayload, share: Share): Promise<void> {
    await applyShares(this.s, this.consumers, g, shares(this.consumers, share), false);
  }

  async close(): Promise<void> {}
}

/** How long a stop waits for the consumers' thread to close its handles. */
const CLOSE_WAIT_MS = 5000;

/** Replies of the consumers' thread: the generation applied, or why it was not. */
export interface Applied {
  n: number;
  /** where the batch's time went, in ms by step */
  took?: Timings;
  /** the thread's JavaScript heap after the batch (bytes in use, and reserved) */
  heap?: { size: number; capacity: number };
  error?: string;
  /** why, when the failure was a full disk or map (full.ts) */
  full?: string;
}

/**
 * Applies generations on the consumers' own thread (worker.ts), which opens the same LMDB
 * environments and the same consumers. Only serials and seqs cross; the thread reads, parses
 * and derives what it applies, so the relay's main thread never stalls on a batch.
 */
export class ThreadApplier implements Applier {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private readonly walks = new Map<number, { resolve: (r: WalkReply) => void; reject: (e: Error) => void }>();
  private walkIds = 0;
  broken = false;
  /** the thread's JavaScript heap as of its last batch (/metrics) */
  heap = { size: 0, capacity: 0 };
  /** milliseconds the thread spent in each step since start, summed over batches (/metrics) */
  readonly took: Timings = {};
  /** resolves a stop's wait once the thread has closed its handles (or failed) */
  private closed: (() => void) | undefined;

  constructor(path: string, names: readonly string[], mapSizeGb?: number) {
    // Named, so per-thread CPU (top -H, /proc/PID/task) tells it from the verify threads.
    this.worker = new Worker(new URL("./worker.ts", import.meta.url), {
      workerData: { path, names, mapSizeGb },
      name: "consumers",
    });
    this.worker.on("message", (m: Applied | { closed: true } | { walk: number; reply: WalkReply }) => {
      if ("walk" in m) {
        const w = this.walks.get(m.walk);
        this.walks.delete(m.walk);
        w?.resolve(m.reply);
        return;
      }
      if (!("n" in m)) {
        this.closed?.();
        return;
      }
      if (m.heap) this.heap = m.heap;
      if (m.took) for (const [k, ms] of Object.entries(m.took)) this.took[k] = (this.took[k] ?? 0) + ms;
      const w = this.waiting.get(m.n);
      if (!w) return;
      this.waiting.delete(m.n);
      if (m.error === undefined) w.resolve();
      else w.reject(Object.assign(new Error(m.error), { full: m.full }));
    });
    this.worker.on("error", (e: Error) => {
      this.broken = true;
      this.closed?.();
      for (const w of this.waiting.values()) w.reject(new Error(`consumers' thread failed: ${e.message}`));
      this.waiting.clear();
      for (const w of this.walks.values()) w.reject(new Error(`consumers' thread failed: ${e.message}`));
      this.walks.clear();
    });
  }

  /** Whether search walks may be sent: the thread is up and applies no batch now. */
  ready(): boolean {
    return !this.broken && this.waiting.size === 0;
  }

  /** Search walks sent and not answered yet. */
  inFlight(): number {
    return this.walks.size;
  }

  /** A search's walk on the consumers' thread (search/remote.ts). */
  walk(req: WalkRequest): Promise<WalkReply> {
    if (this.broken) return Promise.reject(new Error("consumers' thread is gone"));
    const id = ++this.walkIds;
    return new Promise((resolve, reject) => {
      this.walks.set(id, { resolve, reject });
      this.worker.postMessage({ walk: id, req });
    });
  }

  apply(g: GenPayload): Promise<void> {
    if (this.broken) return Promise.reject(new Error("consumers' thread is gone"));
    return new Promise((resolve, reject) => {
      this.waiting.set(g.n, { resolve, reject });
      this.worker.postMessage(g, [g.adds.buffer, g.removes.buffer] as never);
    });
  }

  /** Has the thread close its handles on the environments (if it still can), then ends it. */
  async close(): Promise<void> {
    if (!this.broken) {
      const closed = new Promise<void>((resolve) => {
        this.closed = resolve;
      });
      this.worker.postMessage({ close: true });
      // A thread that does not answer is ended anyway: a stop never hangs on it.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    // Nothing more is sent to it, and a walk it did not answer is done here instead.
    this.broken = true;
    await this.worker.terminate();
    for (const w of this.walks.values()) w.reject(new Error("consumers' thread closed"));
    this.walks.clear();
  }
}
