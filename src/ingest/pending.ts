// EVENTs read from the sockets and not yet answered, from every connection, bounded: past the
// bound the connection that sent the last one stops being read (TCP backpressure) until half
// of them are answered. Behind ingest the writer waits whenever the consumers' backlog is at
// its bound (consumers/runner.ts), so this is what keeps a burst from piling up in memory
// in front of it: nothing is refused or dropped, the clients are only slowed down.
import type { Client } from "./client.ts";

/** What an event costs here besides its tags and content (id, pubkey, sig, the object). */
const EVENT_OVERHEAD = 400;

export const pendingBytes = (tagsJson: string, contentJson: string): number =>
  tagsJson.length + contentJson.length + EVENT_OVERHEAD;

export class PendingGate {
  events = 0;
  bytes = 0;
  /** connections paused since start (metrics) */
  pauses = 0;
  private readonly paused = new Set<Client>();

  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
  ) {}

  /** Connections not being read at the moment. */
  get pausedNow(): number {
    return this.paused.size;
  }

  /** An EVENT was read from `conn`: counted until `release`; at the bound, `conn` is paused. */
  take(conn: Client, bytes: number): void {
    this.events++;
    this.bytes += bytes;
    if ((this.events >= this.maxEvents || this.bytes >= this.maxBytes) && !this.paused.has(conn)) {
      this.paused.add(conn);
      this.pauses++;
      conn.pause();
    }
  }

  /** EVENTs answered: once half the bound is free again, every paused connection is read again. */
  release(events: number, bytes: number): void {
    this.events -= events;
    this.bytes -= bytes;
    if (this.paused.size === 0 || this.events > this.maxEvents / 2 || this.bytes > this.maxBytes / 2) return;
    for (const c of this.paused) c.resume();
    this.paused.clear();
  }
}

declare module "../context.ts" {
  interface RelayContext {
    /** EVENTs read and not yet answered: past its bound, sockets are paused */
    pending: PendingGate;
  }
}
