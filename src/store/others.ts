// Following other processes that write the same log (`relay import`, `relay delete` beside the
// relay): what they committed between two transactions of this writer, read inside its own, so
// that `onCommitted` hears every commit to the log in serial order, whoever made it.
import type { NostrEvent } from "../nostr/event.ts";
import type { Committed } from "./batch.ts";
import { readU64, serialKey } from "./keys.ts";
import type { Removal } from "./removals.ts";
import { removalsAfter } from "./removals.ts";
import type { HighWater } from "./serials.ts";
import type { Store } from "./types.ts";

/**
 * Events of other processes handed on per transaction, at most. A `relay import` beside the
 * relay commits as fast as it can; read in one go, its million events would all wait in the
 * consumers' backlog at once (parsed, with their JSON), past its bound. In chunks, the writer
 * asks for room before each one, as it does before its own batches.
 */
export const OTHERS_CHUNK = 2048;

/** What other processes committed between two transactions of this one. */
export interface Others {
  stored: Committed[];
  removed: Removal[];
  /** how far they were read: the marks the transaction opened with, or less (`more`) */
  through: HighWater;
  /** more of their events wait past `through.serial`, for the next transactions */
  more: boolean;
}

/**
 * What other processes committed since `known` (the marks this writer last handed on), read in
 * its transaction (`now`: the marks it opened with). An event they added and removed in between
 * is in neither list: nobody here saw it. Tells the writer's own indexers (NIP-40 expiry) too.
 */
export function othersSince(s: Store, known: HighWater, now: HighWater): Others | undefined {
  if (now.serial === known.serial && now.removal === known.removal) return undefined;
  const stored: Committed[] = [];
  const range = { start: serialKey(known.serial + 1), end: serialKey(now.serial + 1), limit: OTHERS_CHUNK };
  for (const { key, value } of s.eventsText.getRange(range)) {
    const json = value as string;
    const c: Committed = { event: JSON.parse(json) as NostrEvent, json, serial: readU64(key as Buffer, 0) };
    stored.push(c);
    for (const ix of s.indexers) ix.seen(c.event, c.serial, true);
  }
  const removed: Removal[] = [];
  for (const r of removalsAfter(s.removals, known.removal)) {
    if (r.seq > now.removal) break;
    if (r.serial > known.serial) continue;
    removed.push(r);
    for (const ix of s.indexers) ix.seen(r.event, r.serial, false);
  }
  // Removals of events past `through` need no record here: those events are gone from the
  // log, so the next chunk never reads them.
  const more = stored.length === OTHERS_CHUNK && stored[stored.length - 1]!.serial < now.serial;
  const through = more ? { serial: stored[stored.length - 1]!.serial, removal: now.removal } : now;
  return { stored, removed, through, more };
}
