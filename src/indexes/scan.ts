// Whole-store walks for the data commands (export, delete, stats, prune): the events matching a
// filter oldest first, through the planner's indexes up to their watermark and the log after it,
// per-kind counts and the time span. Every walk reads in chunks, each in its own short read
// transaction, so a walk over millions of events neither holds a snapshot open nor loads
// everything in memory. Removing what a walk found is the writer's (store/lifecycle.ts).
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { countEntries, readEntries } from "../store/index-db.ts";
import { hexBytes, readU64, serialKey, TIME_PREFIX } from "../store/keys.ts";
import type { Store } from "../store/types.ts";
import { scanPlan } from "./cursor.ts";
import { indexSnapshot } from "./indexes.ts";
import { planFilter } from "./plan.ts";
import { bodyFrom, tailEvents, tailMatches } from "./tail.ts";

/** One stored event: its serial, created_at and the stored JSON bytes, verbatim. */
export interface StoredEvent {
  serial: number;
  time: number;
  json: Buffer;
}

/** The id of a stored event, read at its fixed offset without parsing. */
export const storedId = (json: Buffer): string =>
  json.toString("latin1", STORED_ID_OFFSET, STORED_ID_OFFSET + 64);

function loadBytes(s: Store, serial: number): Buffer | undefined {
  return s.events.getBinary(serialKey(serial)) ?? undefined;
}

const matches = (f: Filter, json: Buffer): boolean =>
  matchFilter(f, JSON.parse(json.toString("utf8")) as NostrEvent);

/**
 * Every stored event matching the filter (`limit` and `search` ignored), oldest first: by
 * created_at, then by serial (arrival order). Uses the planner's index and checks candidates
 * against the filter only where the index does not already guarantee it.
 */
export function* scanOldestFirst(s: Store, f: Filter, chunk = 1024): Generator<StoredEvent> {
  const plan = planFilter(s, f);
  if (plan.type === "empty") return;
  if (plan.type === "ids") {
    const found: StoredEvent[] = [];
    for (const id of plan.ids) {
      const v = s.ids.get(hexBytes(id));
      if (!v) continue;
      const serial = readU64(v, 0);
      const json = loadBytes(s, serial);
      if (!json || !matches(f, json)) continue;
      found.push({ serial, time: (JSON.parse(json.toString("utf8")) as NostrEvent).created_at, json });
    }
    yield* found.sort((a, b) => a.time - b.time || a.serial - b.serial);
    return;
  }
  // Events after the indexes' watermark are matched directly and merged in, in the same order.
  const snap = indexSnapshot(s);
  const tail: { serial: number; time: number }[] = [];
  for (const [serial, e] of tailMatches(snap, f, bodyFrom(s))) tail.push({ serial, time: e.created_at });
  tail.sort((a, b) => a.time - b.time || a.serial - b.serial);
  let t = 0;
  function* tailUpTo(time: number, serial: number): Generator<StoredEvent> {
    for (; t < tail.length; t++) {
      const x = tail[t]!;
      if (x.time > time || (x.time === time && x.serial > serial)) return;
      const json = loadBytes(s, x.serial);
      if (json !== undefined) yield { serial: x.serial, time: x.time, json };
    }
  }
  const scan = scanPlan(plan, f, chunk, "oldest");
  let last = -1;
  for (let k = scan.next(); k; k = scan.next()) {
    if (k.serial === last || k.serial > snap.through) continue;
    last = k.serial;
    yield* tailUpTo(k.time, k.serial);
    const json = loadBytes(s, k.serial);
    if (json === undefined) continue;
    if (plan.needsCheck && !matches(f, json)) continue;
    yield { serial: k.serial, time: k.time, json };
  }
  yield* tailUpTo(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
}

/**
 * Number of stored events per kind, from the kind index (one seek and one count per kind) and
 * the events committed after its watermark.
 */
export function countByKind(s: Store): Map<number, number> {
  const out = new Map<number, number>();
  const snap = indexSnapshot(s);
  for (const [, e] of tailEvents(snap)) out.set(e.kind, (out.get(e.kind) ?? 0) + 1);
  // One key per kind, its events its values.
  for (const k of s.kind.getKeys({})) {
    const key = k as Buffer;
    const kind = (key[0]! << 8) | key[1]!;
    out.set(kind, (out.get(kind) ?? 0) + countEntries(s.kind, key, 0, Number.MAX_SAFE_INTEGER));
  }
  return out;
}

/**
 * created_at of the oldest and newest stored events, from the time index and the events
 * committed after its watermark (the tail's removals are not worth a walk: a bound, not a count).
 */
export function timeBounds(s: Store): { oldest: number; newest: number } | undefined {
  let oldest: number | undefined;
  let newest: number | undefined;
  for (const reverse of [false, true]) {
    const got = { times: [] as number[], serials: [] as number[] };
    readEntries(s.time, TIME_PREFIX, 0, Number.MAX_SAFE_INTEGER, reverse, 1, undefined, got);
    if (got.times.length > 0) {
      if (reverse) newest = got.times[0];
      else oldest = got.times[0];
    }
  }
  for (const [, e] of tailEvents(indexSnapshot(s))) {
    if (oldest === undefined || e.created_at < oldest) oldest = e.created_at;
    if (newest === undefined || e.created_at > newest) newest = e.created_at;
  }
  return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
}
