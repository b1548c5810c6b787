// What this node must still append to the cluster stream: the events its writer committed from
// clients, in serial order, until the stream acknowledges each. The log is the source of truth:
// only a watermark (every local event at or below this serial is in the stream) is kept, in a
// small file, and what lies above it is read back from the log after a restart or an overflow.
// Owns no connection; node.ts publishes what `next` hands out and reports back.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Committed } from "../store/batch.ts";
import { readU64, serialKey } from "../store/keys.ts";
import type { Store } from "../store/types.ts";

/** One event to append. */
export interface Outgoing {
  id: string;
  json: string;
  serial: number;
  /** handed to the publisher and not answered yet */
  sending: boolean;
  acked: boolean;
  waiters: ((ok: boolean) => void)[];
}

const STATE_FILE = "cluster-published";

export class Outbox {
  /** un-acknowledged events (and acknowledged ones behind them), in serial order */
  private queue: Outgoing[] = [];
  private byId = new Map<string, Outgoing>();
  /** events above this serial are not in `queue` (it overflowed): read them back from the log */
  private spillFrom: number | undefined;
  /** highest committed serial this outbox has been told of */
  private seen: number;
  private saved: number;
  /** serials waiting for the watermark (events read back from the log after an overflow) */
  private serialWaiters: { serial: number; resolve: (ok: boolean) => void }[] = [];

  constructor(
    private readonly store: Store,
    /** the data directory, where the watermark is kept */
    private readonly dir: string,
    /** the writer's highest committed serial */
    private readonly visible: () => number,
    private readonly max: number,
  ) {
    // First start in a cluster: what the store held before is not appended (docs/cluster.md).
    const w = readWatermark(dir);
    this.seen = w ?? visible();
    this.saved = this.seen;
    if (this.seen < visible()) this.spillFrom = this.seen + 1;
    // Written at once: a crash before the first acknowledgement must not make the next start
    // take what was committed meanwhile for "held before joining".
    if (w === undefined) this.write(this.seen);
  }

  /** Every local event at or below this serial is in the stream. */
  get watermark(): number {
    const head = this.queue[0];
    if (head) return head.serial - 1;
    return this.spillFrom !== undefined ? this.spillFrom - 1 : this.seen;
  }

  get size(): number {
    return this.queue.length + (this.spillFrom !== undefined ? this.visible() - this.spillFrom + 1 : 0);
  }

  /** Committed events; those from clients are queued (the stream's own are only counted past). */
  committed(stored: readonly Committed[], fromStream: (id: string) => boolean): void {
    for (const c of stored) {
      if (c.serial > this.seen) this.seen = c.serial;
      if (fromStream(c.event.id)) continue;
      if (this.spillFrom !== undefined) continue;
      if (this.queue.length >= this.max) {
        this.spillFrom = c.serial;
        continue;
      }
      this.push(c.event.id, c.json, c.serial);
    }
  }

  /** Up to `n` events not yet handed out, refilled from the log once the queue has room. */
  next(n: number): Outgoing[] {
    this.refill();
    const out: Outgoing[] = [];
    for (const o of this.queue) {
      if (out.length >= n) break;
      if (!o.sending && !o.acked) {
        o.sending = true;
        out.push(o);
      }
    }
    return out;
  }

  acked(o: Outgoing): void {
    o.sending = false;
    o.acked = true;
    this.byId.delete(o.id);
    for (const w of o.waiters) w(true);
    o.waiters = [];
    let k = 0;
    while (k < this.queue.length && this.queue[k]!.acked) k++;
    if (k > 0) this.queue.splice(0, k);
    const w = this.watermark;
    const ready = this.serialWaiters.filter((s) => s.serial <= w);
    if (ready.length === 0) return;
    this.serialWaiters = this.serialWaiters.filter((s) => s.serial > w);
    for (const s of ready) s.resolve(true);
  }

  /** The publish failed; it is handed out again by a later `next`. */
  failed(o: Outgoing): void {
    o.sending = false;
  }

  /**
   * Resolves true once the event with this id (stored at `serial`) is in the stream, false on
   * timeout. An event this node did not queue (it came from the stream) is there already.
   */
  whenAcked(id: string, serial: number | undefined, timeoutMs: number): Promise<boolean> {
    const o = this.byId.get(id);
    const inSpill = o === undefined && serial !== undefined && serial > this.watermark;
    if (!o && !inSpill) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      if (o) o.waiters.push(done);
      else this.serialWaiters.push({ serial: serial!, resolve: done });
    });
  }

  /** Writes the watermark if it moved (atomically: a crash leaves the old or the new one). */
  save(): void {
    const w = this.watermark;
    if (w !== this.saved) this.write(w);
  }

  private write(w: number): void {
    const file = join(this.dir, STATE_FILE);
    writeFileSync(`${file}.tmp`, `${w}\n`);
    renameSync(`${file}.tmp`, file);
    this.saved = w;
  }

  private push(id: string, json: string, serial: number): void {
    const o: Outgoing = { id, json, serial, sending: false, acked: false, waiters: [] };
    this.queue.push(o);
    this.byId.set(id, o);
  }

  /** Moves events above the overflow point from the log into the queue while it has room. */
  private refill(): void {
    if (this.spillFrom === undefined || this.queue.length >= this.max / 2) return;
    const s = this.store;
    let next = this.spillFrom;
    // Serials the writer allocated but has not committed are queued by `committed` instead.
    const last = this.visible();
    for (const { key, value } of s.eventsText.getRange({ start: serialKey(next) })) {
      if (this.queue.length >= this.max) break;
      const serial = readU64(key as Buffer, 0);
      if (serial > last) break;
      // Events that came from the stream are appended again here; the stream drops the copy
      // within its duplicate window and every node's writer drops it after that.
      this.push((JSON.parse(value) as { id: string }).id, value, serial);
      next = serial + 1;
    }
    if (this.queue.length < this.max) {
      // Everything up to the log's end is queued; later commits are queued as they come.
      this.spillFrom = undefined;
      if (next - 1 > this.seen) this.seen = next - 1;
      if (this.seen < last) this.seen = last;
    } else this.spillFrom = next;
  }
}

function readWatermark(dir: string): number | undefined {
  try {
    const n = Number(readFileSync(join(dir, STATE_FILE), "utf8").trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
