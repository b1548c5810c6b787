// A live subscription: its filters, its frame prefix, and the high-water mark that splits stored
// results from live ones. Until EOSE, live matches wait in `pending` so they follow the stored
// answer; stored serials at or below `hwm` are never delivered live (they were in the answer).
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { eventFrame, eventPrefix } from "../wire/frames.ts";
import type { LiveSub } from "./live-index.ts";

/** Live events held for one subscription while its stored answer is still being sent. */
export const MAX_PENDING = 10_000;

/** Where a subscription's frames go: the client connection (server/connection.ts). */
export interface FrameSink {
  /** `verb`: the frame's, when the caller knows it (counted without reading the frame) */
  send(frame: string, verb?: string): boolean;
}

export class Subscription implements LiveSub {
  readonly prefix: string;
  stamp = 0;
  pending: string[] | null = [];
  cancelled = false;

  constructor(
    readonly conn: FrameSink,
    readonly subId: string,
    readonly filters: readonly Filter[],
    readonly hwm: number,
    /** per-reader access rule (restricted kinds) */
    private readonly mayRead?: (e: NostrEvent) => boolean,
  ) {
    this.prefix = eventPrefix(subId);
  }

  /** Delivers a live event; `serial` is undefined for ephemeral events. */
  deliver(e: NostrEvent, json: string, serial: number | undefined): void {
    if (this.cancelled || (serial !== undefined && serial <= this.hwm)) return;
    if (this.mayRead && !this.mayRead(e)) return;
    const frame = eventFrame(this.prefix, json);
    if (this.pending) {
      if (this.pending.length < MAX_PENDING) this.pending.push(frame);
      return;
    }
    this.conn.send(frame, "EVENT");
  }
}
