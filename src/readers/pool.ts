// The reader threads (worker.ts), seen from the main thread: each REQ's stored part goes to the
// one with the fewest in hand, and comes back as each filter's index hits, EVENT frames ready to
// send. A thread that fails, ends or does not answer within `timeoutMs` fails only the requests
// it had in hand (the REQs get `CLOSED "error: …"`) and is replaced.
//
// Why threads: the main thread parses every frame, runs every step of a published event that
// comes back from another thread and fans events out to live subscribers. With the stored reads
// on it too, a REQ waited for its turn behind the writes and a live event behind the reads
// (docs/performance/2026-12.md, the mixed phase); strfry gives its stored reads threads of their own.
import { Worker } from "node:worker_threads";
import type { IndexPart } from "../indexes/query.ts";
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { StoreOptions } from "../store/store.ts";
import type { FromReader, PartsRequest, ToReader } from "./messages.ts";
import { unpackParts } from "./messages.ts";

export interface ReaderPoolOptions {
  path: string;
  /** how the store is opened there, as in this thread (lmdb-js shares the environments) */
  store: StoreOptions;
  threads: number;
  /** a thread that has not answered a request within this long is ended and replaced */
  timeoutMs: number;
  log?: (line: string) => void;
}

interface InHand {
  resolve: (parts: IndexPart[] | undefined) => void;
  /** where a frame's id starts (its prefix's length on) */
  at: number;
  reject: (e: Error) => void;
  cancelled: () => boolean;
  /** a cancel was sent for it */
  told: boolean;
  since: number;
}

class Reader {
  readonly worker: Worker;
  readonly inHand = new Map<number, InHand>();
  gone = false;
  closed: (() => void) | undefined;

  constructor(
    o: ReaderPoolOptions,
    n: number,
    private readonly onGone: (r: Reader, reason: string) => void,
  ) {
    // Named, so per-thread CPU (top -H, /proc/PID/task) tells the readers apart.
    this.worker = new Worker(new URL("./worker.ts", import.meta.url), {
      workerData: { path: o.path, options: o.store },
      name: `reader ${n}`,
    });
    this.worker.on("message", (m: FromReader) => this.hear(m));
    this.worker.on("error", (e: Error) => this.onGone(this, `reader thread failed: ${e.message}`));
    this.worker.on("exit", (code: number) => this.onGone(this, `reader thread ended (exit code ${code})`));
  }

  private hear(m: FromReader): void {
    switch (m.type) {
      case "closed":
        this.closed?.();
        return;
      case "parts":
      case "dropped":
      case "failed": {
        const h = this.inHand.get(m.id);
        if (!h) return;
        this.inHand.delete(m.id);
        if (m.type === "parts") h.resolve(unpackParts(m.packed, h.at));
        else if (m.type === "dropped") h.resolve(undefined);
        else h.reject(new Error(m.error));
        return;
      }
      default:
        m satisfies never;
    }
  }

  post(m: ToReader): void {
    this.worker.postMessage(m);
  }

  /** Fails what it had in hand. */
  fail(reason: string): void {
    for (const h of this.inHand.values()) h.reject(new Error(reason));
    this.inHand.clear();
  }
}

export class ReaderPool {
  private readonly readers: Reader[] = [];
  private ids = 0;
  private sweep: ReturnType<typeof setInterval> | undefined;
  private closing = false;
  /** threads replaced since start (metrics) */
  replaced = 0;

  constructor(private readonly o: ReaderPoolOptions) {
    for (let i = 0; i < o.threads; i++) this.readers.push(this.spawn(i + 1));
  }

  private spawn(n: number): Reader {
    return new Reader(this.o, n, (r, reason) => this.gone(r, reason));
  }

  /** A thread failed, ended or hung: what it had fails, and another takes its place. */
  private gone(r: Reader, reason: string): void {
    if (r.gone) return;
    r.gone = true;
    r.closed?.();
    r.fail(reason);
    const i = this.readers.indexOf(r);
    if (this.closing || i < 0) return;
    this.o.log?.(`readers: ${reason}; starting another`);
    this.replaced++;
    void r.worker.terminate();
    this.readers[i] = this.spawn(i + 1);
  }

  /** Requests in hand over every thread. */
  get inFlight(): number {
    let n = 0;
    for (const r of this.readers) n += r.inHand.size;
    return n;
  }

  get threads(): number {
    return this.readers.length;
  }

  /** The threads now (a thread's CPU, tests that end or stall one). */
  get workers(): Worker[] {
    return this.readers.map((r) => r.worker);
  }

  /**
   * Each filter's index hits for a REQ (see PartsRequest); undefined when `cancelled` turned
   * true meanwhile. Rejects when the thread failed.
   */
  parts(req: Omit<PartsRequest, "type" | "id">, cancelled: () => boolean): Promise<IndexPart[] | undefined> {
    let r = this.readers[0];
    for (const x of this.readers) if (!x.gone && (!r || r.gone || x.inHand.size < r.inHand.size)) r = x;
    if (!r || r.gone || this.closing) return Promise.reject(new Error("no reader thread"));
    const id = ++this.ids;
    const reader = r;
    return new Promise((resolve, reject) => {
      const at = STORED_ID_OFFSET + req.prefix.length;
      reader.inHand.set(id, { resolve, reject, at, cancelled, told: false, since: performance.now() });
      reader.post({
        type: "parts",
        json: JSON.stringify({ type: "parts", id, ...req } satisfies PartsRequest),
      });
      this.sweep ??= setInterval(() => this.look(), SWEEP_MS);
    });
  }

  /**
   * Every SWEEP_MS while requests are in hand: tells a thread of the requests whose REQ closed,
   * and ends a thread that has not answered one within the timeout.
   */
  private look(): void {
    const now = performance.now();
    let any = false;
    for (const r of this.readers) {
      for (const [id, h] of r.inHand) {
        any = true;
        if (!h.told && h.cancelled()) {
          h.told = true;
          r.post({ type: "cancel", id });
        }
        if (now - h.since > this.o.timeoutMs) {
          this.gone(r, `reader thread did not answer within ${Math.round(this.o.timeoutMs / 1000)} s`);
          break;
        }
      }
    }
    if (!any) {
      clearInterval(this.sweep);
      this.sweep = undefined;
    }
  }

  /** Has each thread close its handles on the environments, then ends it. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweep);
    await Promise.all(
      this.readers.map(async (r) => {
        if (!r.gone) {
          const closed = new Promise<void>((resolve) => {
            r.closed = resolve;
          });
          r.post({ type: "close" });
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([closed, new Promise((done) => (timer = setTimeout(done, CLOSE_WAIT_MS)))]);
          clearTimeout(timer);
        }
        r.gone = true;
        r.fail("reader threads closed");
        await r.worker.terminate();
      }),
    );
  }
}

/** How often requests in hand are looked at (closed REQs, hung threads). */
const SWEEP_MS = 50;
/** How long a stop waits for a thread to close its handles. */
const CLOSE_WAIT_MS = 5000;
