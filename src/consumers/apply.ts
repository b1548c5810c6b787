// Applying one generation of the log to every consumer, in one write transaction of the derived
// environment that also writes their watermarks: in this thread (data commands, tests, and the
// fallback), or on the consumers' own thread (worker.ts) in the relay.
import { Worker } from "node:worker_threads";
import type { NostrEvent } from "../nostr/event.ts";
import type { WalkReply, WalkRequest } from "../search/remote.ts";
import { CommittedReader, removalRecord } from "../store/committed.ts";
import type { Batch, Consumer, Watermark } from "../store/consumer.ts";
import { readWatermark, writeWatermark } from "../store/consumer.ts";
import type { StoreOptions } from "../store/store.ts";
import { derivedWrite } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import type { Applied, FromConsumers, GenPayload, Timings, ToConsumers } from "./messages.ts";

export interface Applier {
  /** Applies a generation; resolves once it is committed. */
  apply(g: GenPayload): Promise<void>;
  close(): Promise<void>;
  /** set when the applier can apply nothing more (its thread died) */
  readonly broken?: boolean;
  /** its thread's JavaScript heap, when it has a thread of its own */
  readonly heap?: { size: number; capacity: number };
  /** where its thread's time went, when it has one (ms by step, summed) */
  readonly took?: Timings;
  /** where the last batch's time went, by step (ms) */
  readonly lastTook?: Timings;
}

/** Events read from the log on one snapshot (applyGeneration). */
const RENEW_EVERY = 1000;

/**
 * Applies generation `g` to every consumer that has not applied it yet, with their watermarks:
 * in one write transaction of the derived environment, each event is read from the log, parsed
 * and added to every consumer's batch, then dropped, so what a batch holds does not grow with
 * its events (a generation of 4,000 contact lists held ~150 MB parsed at once); then each batch
 * writes what its events added up to. The writes-only consumers' batches are issued after that
 * transaction, as asynchronous writes in one turn with their watermarks, which lmdb-js commits
 * as one transaction; resolves once everything is committed. A generation sent again (after a
 * failure) is applied once: the watermarks, read in the transaction, tell.
 */
export async function applyGeneration(
  s: Store,
  consumers: readonly Consumer[],
  g: GenPayload,
  took: Timings = {},
): Promise<void> {
  // A fresh snapshot of the log: lmdb-js keeps a thread's read transaction until a timer resets
  // it, and this generation's events were committed after the last one was taken.
  s.env.resetReadTxn();
  const open: { c: Consumer; b: Batch }[] = [];
  const began = performance.now();
  let inside = 0;
  derivedWrite(
    s,
    () => {
      const entered = performance.now();
      for (const c of consumers)
        if ((readWatermark(s, c.name)?.gen ?? 0) < g.n) open.push({ c, b: c.batch(s) });
      if (open.length === 0) return;
      feed(s, g, open, took);
      open.forEach(({ c, b }) => {
        if (c.writesOnly) return;
        const t = performance.now();
        b.write();
        writeWatermark(s, c.name, mark(c, g));
        addTime(took, `${c.name}.write`, t);
      });
      inside = performance.now() - entered;
    },
    g.bytes,
  );
  // The rest of the transaction's time is LMDB's commit (and sync).
  took.commit = (took.commit ?? 0) + performance.now() - began - inside;
  let last: unknown;
  for (const { c, b } of open) {
    if (!c.writesOnly) continue;
    const t = performance.now();
    b.write();
    last = writeWatermark(s, c.name, mark(c, g));
    addTime(took, `${c.name}.write`, t);
  }
  const t = performance.now();
  await last;
  addTime(took, "async commit", t);
}

/**
 * Reads the generation's removal records and events from the log, parses each once and adds it
 * to every open batch; the time each step took goes to `took`.
 */
function feed(s: Store, g: GenPayload, open: { c: Consumer; b: Batch }[], took: Timings): void {
  const spent = open.map(() => 0);
  let reading = 0;
  const one = (serial: number, json: string, sign: 1 | -1) => {
    let t = performance.now();
    const e = JSON.parse(json) as NostrEvent;
    reading += performance.now() - t;
    for (let i = 0; i < open.length; i++) {
      t = performance.now();
      open[i]!.b.add(e, serial, sign);
      spent[i]! += performance.now() - t;
    }
  };
  let t = performance.now();
  // Removal records first: they undo events of earlier generations, the adds are new ones.
  for (const seq of g.removes) {
    const r = removalRecord(s, seq);
    reading += performance.now() - t;
    one(r.serial, r.json, -1);
    t = performance.now();
  }
  let read = 0;
  const committed = new CommittedReader(s, g.maxSeq);
  for (const serial of g.adds) {
    // A read transaction of the log pins its snapshot: the writer cannot reuse a page
    // freed after it, and a generation takes seconds to apply, so the log's file grew by
    // what the writer freed meanwhile (a 50k ingest: 25 MiB of free pages in the log
    // against 16). A fresh snapshot every so often still reads every event of this
    // generation: one removed since is in the removal log (CommittedReader).
    if (++read % RENEW_EVERY === 0) s.env.resetReadTxn();
    const json = committed.json(serial);
    reading += performance.now() - t;
    one(serial, json, 1);
    t = performance.now();
  }
  // Nothing more is read from the log: let its writer reuse what it frees from now on.
  s.env.resetReadTxn();
  took.read = (took.read ?? 0) + reading;
  open.forEach(({ c }, i) => {
    took[`${c.name}.add`] = (took[`${c.name}.add`] ?? 0) + spent[i]!;
  });
}

const mark = (c: Consumer, g: GenPayload): Watermark => ({
  version: c.version,
  gen: g.n,
  serial: g.maxSerial,
  removal: g.maxSeq,
});

export function addTime(took: Timings, step: string, since: number): void {
  took[step] = (took[step] ?? 0) + performance.now() - since;
}

export class InThreadApplier implements Applier {
  lastTook: Timings = {};

  constructor(
    private readonly s: Store,
    private readonly consumers: readonly Consumer[],
  ) {}

  apply(g: GenPayload): Promise<void> {
    this.lastTook = {};
    return applyGeneration(this.s, this.consumers, g, this.lastTook);
  }

  async close(): Promise<void> {}
}

/** How long a stop waits for the consumers' thread to close its handles. */
const CLOSE_WAIT_MS = 5000;

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
  lastTook: Timings = {};
  /** resolves a stop's wait once the thread has closed its handles (or failed) */
  private closed: (() => void) | undefined;

  /** `options`: how the store is opened there, as in this thread (lmdb-js shares the environments) */
  constructor(path: string, names: readonly string[], options: StoreOptions = {}) {
    // Named, so per-thread CPU (top -H, /proc/PID/task) tells it from the verify threads.
    this.worker = new Worker(new URL("./worker.ts", import.meta.url), {
      workerData: { path, names, options },
      name: "consumers",
    });
    this.worker.on("message", (m: FromConsumers) => {
      switch (m.type) {
        case "walked": {
          const w = this.walks.get(m.id);
          this.walks.delete(m.id);
          w?.resolve(m.reply);
          return;
        }
        case "closed":
          this.closed?.();
          return;
        case "applied":
          this.applied(m.applied);
          return;
        default:
          m satisfies never;
      }
    });
    this.worker.on("error", (e: Error) => this.gone(`consumers' thread failed: ${e.message}`));
    // A thread can also end with no error (ended from outside, or it left by itself): what it
    // had in hand would otherwise wait forever, a batch holding the writer once the backlog is
    // full and a walk holding its REQ.
    this.worker.on("exit", (code: number) => this.gone(`consumers' thread ended (exit code ${code})`));
  }

  private applied(m: Applied): void {
    if (m.heap) this.heap = m.heap;
    if (m.took) {
      for (const [k, ms] of Object.entries(m.took)) this.took[k] = (this.took[k] ?? 0) + ms;
      this.lastTook = m.took;
    }
    const w = this.waiting.get(m.n);
    if (!w) return;
    this.waiting.delete(m.n);
    if (m.error === undefined) w.resolve();
    else w.reject(Object.assign(new Error(m.error), { full: m.full }));
  }

  private send(m: ToConsumers, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(m, transfer as never);
  }

  /** The thread is gone: nothing more goes to it, and what it had in hand fails. */
  private gone(reason: string): void {
    this.broken = true;
    this.closed?.();
    for (const w of this.waiting.values()) w.reject(new Error(reason));
    this.waiting.clear();
    for (const w of this.walks.values()) w.reject(new Error(reason));
    this.walks.clear();
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
      this.send({ type: "walk", id, req });
    });
  }

  apply(g: GenPayload): Promise<void> {
    if (this.broken) return Promise.reject(new Error("consumers' thread is gone"));
    return new Promise((resolve, reject) => {
      this.waiting.set(g.n, { resolve, reject });
      this.send({ type: "apply", gen: g }, [g.adds.buffer as ArrayBuffer, g.removes.buffer as ArrayBuffer]);
    });
  }

  /** Has the thread close its handles on the environments (if it still can), then ends it. */
  async close(): Promise<void> {
    if (!this.broken) {
      const closed = new Promise<void>((resolve) => {
        this.closed = resolve;
      });
      this.send({ type: "close" });
      // A thread that does not answer is ended anyway. (Bun's terminate() of a thread in the
      // middle of a write transaction has been seen not to end it, test/consumers/resend:
      // the close asked for first is what lets a batch in progress finish.)
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
