// The single writer. Accepted events from every connection are queued and committed in one
// LMDB transaction per turn; duplicates and replaceable/addressable rules are decided inside that
// transaction. Callers hear the outcome only after the batch is flushed to disk.
import type { NostrEvent } from "../nostr/event.ts";
import { firstTagValue } from "../nostr/event.ts";
import { isAddressable, isReplaceable } from "../nostr/kinds.ts";
import type { Reject } from "../wire/reasons.ts";
import { error, olderVersion } from "../wire/reasons.ts";
import { hexBytes, readReplaceable, replaceableKey, replaceableValue } from "./keys.ts";
import type { Store } from "./store.ts";
import { putEvent, readEvent, removeEvent } from "./store.ts";

export type WriteOutcome =
  | { status: "stored"; serial: number }
  | { status: "duplicate" }
  | { status: "rejected"; reject: Reject };

export interface Committed {
  event: NostrEvent;
  json: string;
  serial: number;
}

interface Pending {
  event: NostrEvent;
  json: string;
  resolve: (o: WriteOutcome) => void;
  outcome?: WriteOutcome;
}

export class Writer {
  /** Highest serial whose transaction has committed; readers never see beyond it. */
  visibleSerial: number;
  private queue: Pending[] = [];
  private running = false;
  private idle: Promise<void> = Promise.resolve();
  private idleResolve: (() => void) | undefined;
  batches = 0;
  lastBatchSize = 0;
  lastCommitMs = 0;

  constructor(
    private readonly store: Store,
    private readonly maxBatch: number,
    private readonly onCommitted: (stored: Committed[]) => void,
  ) {
    this.visibleSerial = store.lastSerial;
  }

  submit(event: NostrEvent, json: string): Promise<WriteOutcome> {
    return new Promise((resolve) => {
      this.queue.push({ event, json, resolve });
      if (!this.running) this.start();
    });
  }

  /** Resolves once everything submitted so far is committed and flushed. */
  drain(): Promise<void> {
    return this.running ? this.idle : Promise.resolve();
  }

  private start(): void {
    this.running = true;
    this.idle = new Promise((r) => {
      this.idleResolve = r;
    });
    // setImmediate gathers every event that arrives in this turn of the event loop.
    setImmediate(() => void this.loop());
  }

  private async loop(): Promise<void> {
    let flushing: Promise<void> = Promise.resolve();
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const started = performance.now();
      try {
        await this.store.env.transaction(() => {
          for (const p of batch) p.outcome = this.apply(p.event, p.json);
        });
      } catch (e) {
        const r = error(`could not store event: ${(e as Error).message}`);
        for (const p of batch) p.outcome = { status: "rejected", reject: r };
      }
      this.batches++;
      this.lastBatchSize = batch.length;
      this.lastCommitMs = performance.now() - started;
      for (const p of batch) if (p.outcome?.status === "stored") this.visibleSerial = p.outcome.serial;
      // The next batch may start committing while this one is flushed to disk; answers and
      // broadcasts still go out in commit order.
      const prev = flushing;
      flushing = prev.then(() => this.store.env.flushed).then(() => this.finish(batch));
      if (this.queue.length === 0) await flushing;
    }
    await flushing;
    this.running = false;
    this.idleResolve?.();
  }

  private finish(batch: Pending[]): void {
    const stored: Committed[] = [];
    for (const p of batch) {
      const o = p.outcome ?? { status: "rejected", reject: error("not written") };
      if (o.status === "stored") stored.push({ event: p.event, json: p.json, serial: o.serial });
      p.resolve(o);
    }
    if (stored.length > 0) this.onCommitted(stored);
  }

  /** Runs inside the write transaction. */
  private apply(e: NostrEvent, json: string): WriteOutcome {
    const s = this.store;
    const idKey = hexBytes(e.id);
    if (s.ids.get(idKey) !== undefined) return { status: "duplicate" };

    const serial = s.lastSerial + 1;
    if (isReplaceable(e.kind) || isAddressable(e.kind)) {
      const d = isAddressable(e.kind) ? (firstTagValue(e, "d") ?? "") : "";
      const rkey = replaceableKey(e.pubkey, e.kind, d);
      const cur = s.replaceable.get(rkey);
      if (cur !== undefined) {
        const old = readReplaceable(cur);
        // Newest wins; on equal created_at the lowest id wins (NIP-01).
        if (old.createdAt > e.created_at || (old.createdAt === e.created_at && old.id < e.id))
          return { status: "rejected", reject: olderVersion() };
        const oldJson = readEvent(s, old.serial);
        if (oldJson !== undefined) removeEvent(s, JSON.parse(oldJson) as NostrEvent, old.serial);
      }
      s.replaceable.put(rkey, replaceableValue(serial, e.created_at, e.id));
    }
    s.lastSerial = serial;
    putEvent(s, e, json, serial);
    return { status: "stored", serial };
  }
}
