// What crosses between the main thread and a reader thread (worker.ts): one union each way, so
// each side's loop is one switch with an exhaustiveness check.
import { type FramePack, unpack } from "../indexes/answer.ts";
import type { Hit, IndexPart } from "../indexes/query.ts";
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
  /** a PartsRequest as JSON: Bun copies a string between threads far faster than the arrays of a filter */
  | { type: "parts"; json: string }
  | { type: "cancel"; id: number }
  | { type: "close" }
  /** keeps the thread busy for `ms` without answering (the pool's tests of a thread that hangs) */
  | { type: "stall"; ms: number };

/**
 * A REQ's index parts as they cross: per filter its hits' numbers, and the frames of every filter
 * as one string and where each ends (FramePack). Strings only: Bun copies a string between
 * threads for 1-2 us where a typed array costs ~20 us to copy and ~70 us to transfer, and an
 * array of hits ~50 us (measured: docs/performance/2026-12.md).
 */
export interface PackedParts {
  /** JSON of PartMeta[] */
  meta: string;
  /** the frames of events whose stored JSON is ASCII, one after another (an 8-bit string) */
  narrow: string;
  /** the others */
  wide: string;
}

interface PartMeta {
  plan: IndexPart["plan"];
  index: string;
  times: number[];
  serials: number[];
  /** each hit's frame in the pack, or -1 for a hit known by its id alone (a tie past the cut) */
  frames: number[];
  /** the ids of those, in order */
  ids: string[];
  /** where each frame of the pack ends in `narrow` and in `wide` (on the first part only) */
  narrowEnds?: number[];
  wideEnds?: number[];
}

export type FromReader =
  | { type: "parts"; id: number; packed: PackedParts }
  /** cancelled (the subscription closed meanwhile) */
  | { type: "dropped"; id: number }
  | { type: "failed"; id: number; error: string }
  | { type: "closed" };

/** The index parts as they cross (worker.ts). */
export function packParts(found: readonly IndexPart[], pack: FramePack): PackedParts {
  const meta = found.map((p, n): PartMeta => {
    const times: number[] = [];
    const serials: number[] = [];
    const frames: number[] = [];
    const ids: string[] = [];
    for (const h of p.hits) {
      times.push(h.time);
      serials.push(h.serial);
      frames.push(h.frame ?? -1);
      if (h.frame === undefined) ids.push(h.id!);
    }
    const ends = n === 0 ? { narrowEnds: pack.narrowEnds, wideEnds: pack.wideEnds } : {};
    return { plan: p.plan, index: p.index, times, serials, frames, ids, ...ends };
  });
  return { meta: JSON.stringify(meta), ...pack.texts() };
}

/** The index parts on the main thread, each answer a frame again; `at`: where a frame's id starts. */
export function unpackParts(p: PackedParts, at: number): IndexPart[] {
  const meta = JSON.parse(p.meta) as PartMeta[];
  const frame = unpack(p, meta[0]?.narrowEnds ?? [], meta[0]?.wideEnds ?? []);
  return meta.map((q) => {
    const hits: Hit[] = new Array(q.times.length);
    let k = 0;
    for (let i = 0; i < hits.length; i++) {
      const f = q.frames[i]!;
      hits[i] =
        f >= 0
          ? { time: q.times[i]!, serial: q.serials[i]!, json: frame(f), at }
          : { time: q.times[i]!, serial: q.serials[i]!, json: undefined, id: q.ids[k++]! };
    }
    return { plan: q.plan, index: q.index, hits };
  });
}
