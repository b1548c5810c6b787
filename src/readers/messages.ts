// What crosses between the main thread and a reader thread (worker.ts): one union each way, so
// each side's loop is one switch with an exhaustiveness check.
import type { IndexPart } from "../indexes/query.ts";
import type { Filter } from "../nostr/filter.ts";

/** A REQ's stored part, asked of a reader thread. */
export interface PartsRequest {
  type: "parts";
  id: number;
  filters: Filter[];
  /** the REQ's high-water mark: no serial above it is answered (the live path has those) */
  hwm: number;
  /** the main thread's snapshot of the REQ indexes ends here; its tail is the main thread's */
  through: number;
  defaultLimit: number;
  maxLimit: number;
  yieldEvery: number;
  /** the subscription's EVENT frame prefix: answers come back as whole frames */
  prefix: string;
  /** the reader's access rule, when one applies (access.ts) */
  restricted?: Restricted;
  /** whether expired events await their purge (the thread hides them, reading the expiry index) */
  expired: boolean;
}

/** Kinds served only to their author and the pubkeys they tag, and whom the reader is. */
export interface Restricted {
  kinds: number[];
  authed: string[];
}

export type ToReader =
  | PartsRequest
  | { type: "cancel"; id: number }
  | { type: "close" }
  /** keeps the thread busy for `ms` without answering (the pool's tests of a thread that hangs) */
  | { type: "stall"; ms: number };

export type FromReader =
  | { type: "parts"; id: number; parts: IndexPart[] }
  /** cancelled (the subscription closed meanwhile) */
  | { type: "dropped"; id: number }
  | { type: "failed"; id: number; error: string }
  | { type: "closed" };
