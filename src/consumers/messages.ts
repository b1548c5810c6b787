// What crosses between the main thread (apply.ts ThreadApplier) and the consumers' thread
// (worker.ts): one union each way, so each side's loop is one switch with an exhaustiveness check.
import type { WalkReply, WalkRequest } from "../search/remote.ts";

/**
 * A generation as it crosses to another thread: the serials of its events and the seqs of its
 * removal records, which the applier reads from the log itself (a copy of every event's JSON
 * cost the main thread ~10 µs an event to clone).
 */
export interface GenPayload {
  n: number;
  maxSerial: number;
  maxSeq: number;
  adds: Float64Array;
  removes: Float64Array;
  /** the stored JSON bytes of its events and removal records */
  bytes: number;
}

/** Milliseconds a batch spent in each step, by name (`read`, `<consumer>.add`, `<consumer>.write`…). */
export type Timings = Record<string, number>;

/** To the consumers' thread. */
export type ToConsumers =
  /** apply a generation (its buffers are transferred) */
  | { type: "apply"; gen: GenPayload }
  /** walk search postings for a search on the main thread (search/remote.ts) */
  | { type: "walk"; id: number; req: WalkRequest }
  /** close the handles on the environments: the thread is about to end */
  | { type: "close" };

/** From the consumers' thread. */
export type FromConsumers =
  | { type: "applied"; applied: Applied }
  | { type: "walked"; id: number; reply: WalkReply }
  | { type: "closed" };

/** The generation applied, or why it was not. */
export interface Applied {
  n: number;
  /** where the batch's time went, in ms by step */
  took?: Timings;
  /** the thread's JavaScript heap after the batch (bytes in use, and reserved) */
  heap?: { size: number; capacity: number };
  error?: string;
  /** why, when the failure was a full disk or map (full.ts) */
  full?: string;
}
