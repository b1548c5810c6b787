// The bound on what waits for the consumers (events committed and not yet applied), and the
// writer's waits at it. The log on disk is the queue: what waits here is bounded, and once the
// bound is reached the writer waits for the consumers (and ingest, its queue full, stops reading
// from the sockets), so a burst of any length holds the same memory and readers never match
// more than the bound outside the indexes. Before the bound, the writer is paced (pace.ts).
import type { BacklogState } from "../store/batch.ts";
import { Pace } from "./pace.ts";

export interface Bound {
  /** events waiting, at most (0: no bound) */
  maxEvents?: number;
  /** their stored JSON's bytes, at most (0: no bound) */
  maxBytes?: number;
}

/** What waits now: events and their stored JSON's bytes. */
export type Waiting = () => { events: number; bytes: number };

export class Backlog {
  /** the writer's pace while the backlog nears its bound */
  readonly pace = new Pace();
  /** the most events that waited at once since start (metrics; the bound's test) */
  peakEvents = 0;
  /** times a writer waited at the bound, and for how long in all (ms) */
  waits = 0;
  waitedMs = 0;
  /** writers waiting for room */
  private waiters: (() => void)[] = [];
  /** the process stops: the writer no longer waits */
  private closed = false;
  /** it passed half its bound while a batch applied: the next goes as that one ends */
  pressedMeanwhile = false;

  constructor(
    private readonly bound: Bound,
    private readonly waiting: Waiting,
  ) {}

  /** The writer committed `events`; `applying`: a batch is being applied meanwhile. */
  committed(events: number, applying: boolean, now: number): void {
    const w = this.waiting();
    if (w.events > this.peakEvents) this.peakEvents = w.events;
    const b = this.bound;
    this.pace.committed(events, w.events, b.maxEvents ?? 0, w.bytes, b.maxBytes ?? 0, now);
    if (applying && this.pressed()) this.pressedMeanwhile = true;
  }

  /** Events a batch takes: half the bound, so that one batch applies while the next fills. */
  batchEvents(): number {
    return half(this.bound.maxEvents);
  }

  batchBytes(): number {
    return half(this.bound.maxBytes);
  }

  /** More than half of the bound waits: the writer is paced. */
  private pressed(): boolean {
    const w = this.waiting();
    const { maxEvents = 0, maxBytes = 0 } = this.bound;
    return (maxEvents > 0 && w.events > maxEvents / 2) || (maxBytes > 0 && w.bytes > maxBytes / 2);
  }

  /** Whether the events waiting, and their bytes, are under the bound. */
  private hasRoom(): boolean {
    const w = this.waiting();
    const { maxEvents = 0, maxBytes = 0 } = this.bound;
    return (maxEvents <= 0 || w.events < maxEvents) && (maxBytes <= 0 || w.bytes < maxBytes);
  }

  /**
   * Asked by the writer before each batch (through the runner): go on, wait a moment (paced),
   * wait for room (`full` is called to have the consumers apply), or, while the consumers
   * cannot apply (`failure`), refuse: waiting would hang every writer.
   */
  ask(failure: { reason: string; full: boolean } | undefined, full: () => void): BacklogState {
    if (this.closed) return undefined;
    if (this.hasRoom()) {
      const d = this.pace.delay(performance.now());
      return d > 0 ? Bun.sleep(d) : undefined;
    }
    if (failure) return { refuse: failure.reason, full: failure.full };
    full();
    const started = performance.now();
    this.waits++;
    return new Promise<void>((resolve) => this.waiters.push(resolve)).then(() => {
      this.waitedMs += performance.now() - started;
    });
  }

  /** Whether writers wait for room. */
  get waited(): boolean {
    return this.waiters.length > 0;
  }

  /** Lets waiting writers go on once there is room (or, `failing`, so that they refuse). */
  wake(failing: boolean): void {
    if (this.waiters.length === 0 || (!this.hasRoom() && !failing)) return;
    this.release();
  }

  /** The process stops: the writer commits what it holds without waiting. */
  close(): void {
    this.closed = true;
    this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

const half = (max: number | undefined): number =>
  max && max > 0 ? Math.max(1, Math.floor(max / 2)) : Number.POSITIVE_INFINITY;
