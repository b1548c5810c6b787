// Moves event verification off the main thread: a batcher gathers events from every connection
// and a piscina pool checks each batch in a worker. Transport only; what "valid" means is batch.ts.
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { NostrEvent } from "../nostr/event.ts";
import { packBatch, resultAt } from "./batch.ts";
import { type BackendChoice, type BackendPreference, chooseBackend } from "./select.ts";
import { type SchnorrBackend, type VerifyResult, verifyEvent } from "./verify.ts";
import type { VerifyWorkerData } from "./worker.ts";

export interface VerifyPoolOptions {
  /** Worker threads; default one per spare core (cores - 1). 0 verifies in-thread, unbatched. */
  threads?: number;
  /** Signature backend; default "auto". */
  backend?: BackendPreference;
  /** Library file tried first when the backend may be native. */
  libraryPath?: string;
  /** Flush a batch once it holds this many events; default 64. */
  batchSize?: number;
  /** ...or, while every thread is busy, this long after its first event arrived; default 1 ms. */
  flushMs?: number;
}

interface Waiter {
  resolve(r: VerifyResult): void;
  reject(err: unknown): void;
}

// piscina derives its TransferList type from MessagePort.postMessage, which under bun-types
// resolves to the options-object overload; the runtime takes a plain array as in Node.
type TransferList = NonNullable<Parameters<Piscina["run"]>[1]>["transferList"];
const transferList = (buf: Uint8Array): TransferList => [buf.buffer] as unknown as TransferList;

export const defaultThreads = (): number => Math.max(0, availableParallelism() - 1);

export class VerifyPool {
  readonly backend: SchnorrBackend;
  /** For the start-up log: which backend and why, and how many threads. */
  readonly reason: string;
  readonly threads: number;
  private readonly piscina: Piscina | undefined;
  private readonly batchSize: number;
  private readonly flushMs: number;
  private events: NostrEvent[] = [];
  private waiters: Waiter[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** a flush is scheduled for the end of this turn */
  private soon = false;
  private readonly running = new Set<Promise<void>>();
  private waiting = 0;
  private closed = false;

  constructor(opts: VerifyPoolOptions = {}) {
    const choice: BackendChoice = chooseBackend(opts.backend ?? "auto", opts.libraryPath);
    this.backend = choice.backend;
    this.threads = Math.max(0, Math.floor(opts.threads ?? defaultThreads()));
    this.batchSize = Math.max(1, opts.batchSize ?? 64);
    this.flushMs = Math.max(0, opts.flushMs ?? 1);
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
        workerData,
      });
    }
  }

  /** Events submitted and not yet answered; ingest can use it for backpressure. */
  get pending(): number {
    return this.waiting;
  }

  /** Same answer as verifyEvent(event, backend), computed in a worker alongside other callers' events. */
  submit(event: NostrEvent): Promise<VerifyResult> {
    if (this.closed) return Promise.reject(new Error("verify pool is closed"));
    // Without workers, batching would only add latency.
    if (!this.piscina) {
      try {
        return Promise.resolve(verifyEvent(event, this.backend));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<VerifyResult>((resolve, reject) => {
      this.waiting++;
      this.events.push(event);
      this.waiters.push({ resolve, reject });
      if (this.events.length >= this.batchSize) this.flush();
      else if (this.timer === undefined && !this.soon) {
        // A thread sits idle: send what this turn of the event loop brings, without waiting for
        // the timer (a lone live event would pay it in full). All busy: gather until a batch
        // comes back, the batch is full, or the timer fires.
        if (this.running.size < this.threads) {
          this.soon = true;
          setImmediate(() => {
            this.soon = false;
            this.flush();
          });
        } else this.timer = setTimeout(() => this.flush(), this.flushMs);
      }
    });
  }

  /** Verifies many events at once; results are in input order. */
  verifyMany(events: readonly NostrEvent[]): Promise<VerifyResult[]> {
    return Promise.all(events.map((e) => this.submit(e)));
  }

  /** Sends whatever is gathered now instead of waiting for the size or time trigger. */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.events.length === 0 || !this.piscina) return;
    const events = this.events;
    const waiters = this.waiters;
    this.events = [];
    this.waiters = [];
    const run = this.runBatch(this.piscina, events, waiters).finally(() => {
      this.running.delete(run);
      this.waiting -= waiters.length;
      if (this.events.length > 0 && !this.closed) this.flush(); // a thread is free again
    });
    this.running.add(run);
  }

  private async runBatch(piscina: Piscina, events: NostrEvent[], waiters: Waiter[]): Promise<void> {
    try {
      const { batch, slot } = packBatch(events);
      const n = batch.commitments.length;
      const answered =
        n === 0
          ? batch.buf
          : ((await piscina.run(batch, { transferList: transferList(batch.buf) })) as Uint8Array);
      for (let i = 0; i < waiters.length; i++) waiters[i]!.resolve(resultAt(slot, answered, n, i));
    } catch (err) {
      // A failed batch (worker died, commitment not serialisable) fails only its own callers.
      for (const w of waiters) w.reject(err);
    }
  }

  /** Answers everything already submitted, then stops the threads. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    await Promise.all(this.running);
    await this.piscina?.destroy();
  }
}

export function createVerifyPool(opts: VerifyPoolOptions = {}): VerifyPool {
  return new VerifyPool(opts);
}
