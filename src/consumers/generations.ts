// The generations the runner holds: the open one, which the writer's commits fill, and the sealed
// ones waiting to be applied, oldest first. Readers add the views of those past the watermark
// they read (runner.ts `tail`).
import type { Consumer, Watermark } from "../store/consumer.ts";
import type { Store } from "../store/types.ts";
import { Gen, viewOf } from "./generation.ts";

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

export class Generations {
  open: Gen;
  private readonly sealed: Gen[] = [];

  constructor(
    private readonly store: Store,
    private readonly consumers: readonly Consumer[],
    serial: number,
    removal: number,
  ) {
    this.open = new Gen(1, consumers, serial, removal);
  }

  /** Drops every generation held and opens generation `n + 1` from the marks given. */
  restart(n: number, serial: number, removal: number): void {
    this.sealed.length = 0;
    this.open = new Gen(n + 1, this.consumers, serial, removal);
  }

  /** Drops every generation held: another process applies them from the log now. */
  dropAll(): void {
    const o = this.open;
    this.restart(o.n, o.maxSerial, o.maxSeq);
  }

  /** Seals the open generation if it holds anything; returns the oldest sealed one, if any. */
  seal(): Gen | undefined {
    if (!this.open.empty) {
      const prev = this.open;
      this.sealed.push(prev);
      this.open = new Gen(prev.n + 1, this.consumers, prev.maxSerial, prev.maxSeq);
    }
    return this.sealed[0];
  }

  /** The oldest sealed generation is on disk. */
  applied(): void {
    this.sealed.shift();
  }

  /** The oldest sealed generation, if any. */
  oldest(): Gen | undefined {
    return this.sealed[0];
  }

  /** Nothing waits: no sealed generation and an empty open one. */
  get empty(): boolean {
    return this.sealed.length === 0 && this.open.empty;
  }

  /** Consumer `i`'s views of the generations past watermark `w` (all of them without one). */
  viewsAfter(i: number, w: Watermark | undefined): unknown[] {
    const out: unknown[] = [];
    this.each((g) => {
      if (!w || g.n > w.gen) out.push(viewOf(this.store, this.consumers, g, i));
    });
    return out;
  }

  /** Events committed and not yet applied (asked before every writer batch: plain loops). */
  events(): number {
    let n = this.open.live;
    for (const g of this.sealed) n += g.live;
    return n;
  }

  /** Bytes of stored JSON the generations hold. */
  bytes(): number {
    let n = this.open.bytes;
    for (const g of this.sealed) n += g.bytes;
    return n;
  }

  /** When the oldest event waiting arrived (performance.now() ms), or 0 when none waits. */
  oldestAt(): number {
    let first = 0;
    this.each((g) => {
      if (g.firstAt > 0 && (first === 0 || g.firstAt < first)) first = g.firstAt;
    });
    return first;
  }

  /** Each consumer's lag: they apply together, so what waits is the same for all of them. */
  lag(applied: Pick<ConsumerLag, "watermark" | "batches" | "lastApplyMs">): ConsumerLag[] {
    const events = this.events();
    const first = this.oldestAt();
    const seconds = events > 0 && first > 0 ? (performance.now() - first) / 1000 : 0;
    return this.consumers.map((c) => ({ name: c.name, events, seconds, ...applied }));
  }

  /** The sealed generations, oldest first, then the open one. */
  private each(f: (g: Gen) => void): void {
    for (const g of this.sealed) f(g);
    f(this.open);
  }
}
