// Moves event verification off the main thread: a batcher gathers events from every connection
// and a piscina pool checks each batch in a worker. Transport only; what "valid" means is batch.ts.
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { NostrEvent } from "../nostr/event.ts";
import type { Verifiable } from "./batch.ts";
import { packBatch, resultAt, verifiable, verifyPacked } from "./batch.ts";
import { type BackendChoice, type BackendPreference, chooseBackend } from "./select.ts";
import type { SchnorrBackend, VerifyResult } from "./verify.ts";
import type { VerifyWorkerData } from "./worker.ts";

export interface VerifyPoolOptions {
  /** Worker threads; default one per spare core (cores - 1). 0 verifies in-thread, unbatched. */
  threads?: number;
  /** Signature backend; default "auto". */
  backend?: BackendPreference;
  /** Library file tried first when the backend may be native. */
  libraryPath?: string;
  /** Most events sent to a thread in one batch; default 64. */
  batchSize?: number;
}

/** One caller's events, answered together once every one of them is checked. */
interface Job {
  items: readonly Verifiable[];
  results: VerifyResult[];
  left: number;
  resolve(r: VerifyResult[]): void;
  reject(err: unknown): void;
}

/** A run of one job's events inside a batch sent to a thread. */
interface Segment {
  job: Job;
  from: number;
  count: number;
}

// piscina derives its TransferList type from MessagePort.postMessage, which under bun-types
// resolves to the options-object overload; the runtime takes a plain array as in Node.
type TransferList = NonNullable<Parameters<Piscina["run"]>[1]>["transferList"];
const transferList = (buf: Uint8Array): TransferList => [buf.buffer] as unknown as TransferList;

export const defaultThreads = (): number => Math.max(0, availableParallelism() - 1);

/** Batches handed to one thread at a time (one being checked, one waiting). */
const IN_FLIGHT = 2;

export class VerifyPool {
  readonly backend: SchnorrBackend;
  /** For the start-up log: which backend and why, and how many threads. */
  readonly reason: string;
  readonly threads: number;
  private readonly piscina: Piscina | undefined;
  private readonly batchSize: number;
  /** jobs whose events are not all sent yet, oldest first; `cursor` is into the first */
  private waiting: Job[] = [];
  private cursor = 0;
  private waitingEvents = 0;
  private busy = 0;
  private readonly running = new Set<Promise<void>>();
  private waitingCount = 0;
  private closed = false;

  constructor(opts: VerifyPoolOptions = {}) {
    const choice: BackendChoice = chooseBackend(opts.backend ?? "auto", opts.libraryPath);
    this.backend = choice.backend;
    this.threads = Math.max(0, Math.floor(opts.threads ?? defaultThreads()));
    this.batchSize = Math.max(1, opts.batchSize ?? 64);
    this.reason = `${choice.reason}; ${this.threads === 0 ? "verifying in-thread" : `${this.threads} verify thread(s)`}`;
    if (this.threads > 0) {
      // Workers get the resolved backend, never "auto", so all threads run the same code.
      const workerData: VerifyWorkerData =
        choice.backend.name === "noble"
          ? { preference: "noble" }
          : { preference: "native", path: choice.path };
      this.piscina = new Piscina({
        filename: new URL("./worker.ts", import.meta.url).href,
        minThreads: this.threads,
        maxThreads: this.threads,
        // Keep threads (and their loaded library and precomputed tables) for the process lifetime.
        idleTimeout: Number.POSITIVE_INFINITY,
        // A second batch waits in each thread's queue while it checks one, so a thread never idles
        // for the round trip of handing an answer back and being given the next batch.
        concurrentTasksPerWorker: IN_FLIGHT,
        workerData,
      });
    }
  }

  /** batches sent to the threads, and the events in them (their ratio is the batch size) */
  batches = 0;
  batchedEvents = 0;

  /** Events submitted and not yet answered; ingest can use it for backpressure. */
  get pending(): number {
    return this.waitingCount;
  }

  /**
   * Checks events (one turn's worth, from every connection); the same answers as verifyEvent
   * with this backend, in input order. A batch goes to a thread at once when one is idle; while
   * all are busy, what arrives waits and leaves together with later arrivals, up to `batchSize`
   * events a batch, as soon as a thread frees.
   */
  verify(items: readonly Verifiable[]): Promise<VerifyResult[]> {
    if (this.closed) return Promise.reject(new Error("verify pool is closed"));
    if (items.length === 0) return Promise.resolve([]);
    if (!this.piscina || this.alone(items)) {
      try {
        const { buf, slot } = packBatch(items);
        const answered = verifyPacked(buf, this.backend);
        return Promise.resolve(items.map((_, i) => resultAt(slot, answered, i)));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<VerifyResult[]>((resolve, reject) => {
      this.waiting.push({ items, results: new Array(items.length), left: items.length, resolve, reject });
      this.waitingEvents += items.length;
      this.waitingCount += items.length;
      this.dispatch();
    });
  }

  /**
   * A lone event while no thread has work is checked here: one native check (~35-50 µs) costs
   * less than the hand-off, and a thread's wake-up on a busy machine was the slowest part of a
   * live event's way at low rates (verification p99 2.6 ms of a 6 ms delivery p99, 200 events/s).
   * Under load events arrive together and go to the threads as before.
   */
  private alone(items: readonly Verifiable[]): boolean {
    return items.length === 1 && this.busy === 0 && this.waitingEvents === 0 && this.backend.name !== "noble";
  }

  /** Verifies many events at once; results are in input order. */
  verifyMany(events: readonly NostrEvent[]): Promise<VerifyResult[]> {
    return this.verify(events.map(verifiable));
  }

  /** Sends batches while a thread is free and events wait. */
  private dispatch(): void {
    const piscina = this.piscina;
    if (!piscina) return;
    while (this.busy < this.threads * IN_FLIGHT && this.waitingEvents > 0) {
      const batch: Verifiable[] = [];
      const segments: Segment[] = [];
      while (batch.length < this.batchSize && this.waiting.length > 0) {
        const job = this.waiting[0]!;
        const from = this.cursor;
        const count = Math.min(job.items.length - from, this.batchSize - batch.length);
        for (let k = 0; k < count; k++) batch.push(job.items[from + k]!);
        segments.push({ job, from, count });
        this.cursor += count;
        if (this.cursor === job.items.length) {
          this.waiting.shift();
          this.cursor = 0;
        }
      }
      this.waitingEvents -= batch.length;
      this.busy++;
      this.batches++;
      this.batchedEvents += batch.length;
      const run = this.runBatch(piscina, batch, segments).finally(() => {
        this.running.delete(run);
        this.busy--;
        this.waitingCount -= batch.length;
        if (!this.closed || this.waitingEvents > 0) this.dispatch(); // a thread is free again
      });
      this.running.add(run);
    }
  }

  private async runBatch(piscina: Piscina, batch: Verifiable[], segments: Segment[]): Promise<void> {
    let answered: Uint8Array;
    let slot: Int32Array;
    try {
      const packed = packBatch(batch);
      slot = packed.slot;
      answered =
        packed.buf.length <= 4
          ? packed.buf
          : ((await piscina.run(packed.buf, { transferList: transferList(packed.buf) })) as Uint8Array);
    } catch (err) {
      // A failed batch (worker died) fails only its own callers.
      for (const { job } of segments) job.reject(err);
      return;
    }
    let i = 0;
    for (const { job, from, count } of segments) {
      for (let k = 0; k < count; k++) job.results[from + k] = resultAt(slot, answered, i++);
      job.left -= count;
      if (job.left === 0) job.resolve(job.results);
    }
  }

  /** Answers everything already submitted, then stops the threads. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.running.size > 0 || this.waitingEvents > 0) {
      this.dispatch();
      await Promise.all(this.running);
    }
    await this.piscina?.destroy();
  }
}

export function createVerifyPool(opts: VerifyPoolOptions = {}): VerifyPool {
  return new VerifyPool(opts);
}
