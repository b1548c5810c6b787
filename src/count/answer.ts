// The answer to a COUNT: the exact count, plus NIP-45 HyperLogLog registers when the request has
// one of the shapes in shapes.ts. Those shapes are counted on the tag index range of their one
// value; each stored record is read for its kind and pubkey at their fixed places, without
// parsing the JSON. Everything else is counted by countQuery.

import { MergedScan } from "../indexes/cursor.ts";
import { indexSnapshot } from "../indexes/indexes.ts";
import type { QueryOptions } from "../indexes/query.ts";
import { countQuery } from "../indexes/query.ts";
import { bodyFrom, refusedInTail, removedIn, tailMatches } from "../indexes/tail.ts";
import { STORED_PUBKEY_OFFSET, storedKind } from "../nostr/canonical.ts";
import type { Filter } from "../nostr/filter.ts";
import { serialKey, tagPrefix } from "../store/keys.ts";
import type { Store } from "../store/types.ts";
import { yieldTurn } from "../yield-turn.ts";
import { Hll } from "./hll.ts";
import type { HllRegisters } from "./registers.ts";
import { recordKey } from "./registers.ts";
import type { HllShape } from "./shapes.ts";
import { hllShape } from "./shapes.ts";

export interface CountAnswer {
  count: number;
  /** 512 hex characters, for the NIP-45 shapes only */
  hll?: string;
}

async function countWithHll(s: Store, shape: HllShape, o: QueryOptions): Promise<CountAnswer | undefined> {
  const prefix = tagPrefix(shape.tag, shape.value);
  if (!prefix) return undefined;
  const kinds = new Set(shape.kinds);
  const hll = new Hll(shape.offset);
  const snap = indexSnapshot(s);
  const scan = new MergedScan(s.tag, [prefix], 0, Number.MAX_SAFE_INTEGER, 1024);
  let count = 0;
  let sinceYield = 0;
  for (let k = scan.next(); k; k = scan.next()) {
    if (++sinceYield >= o.yieldEvery * 8) {
      sinceYield = 0;
      await yieldTurn();
      if (o.cancelled?.()) return undefined;
    }
    if (k.serial > o.hwm || k.serial > snap.through || o.hidden?.(k.serial) || removedIn(snap, k.serial))
      continue;
    const json = s.events.getBinaryFast(serialKey(k.serial));
    if (json === undefined || !kinds.has(storedKind(json))) continue;
    const pubkey = json.toString("latin1", STORED_PUBKEY_OFFSET, STORED_PUBKEY_OFFSET + 64);
    // getBinaryFast hands out a view of a shared buffer: decode its own bytes only.
    if (o.allow && !o.allow(json.toString("utf8", 0, json.length))) continue;
    hll.add(pubkey);
    count++;
  }
  // Events committed after the tag index's watermark are matched directly.
  const f: Filter = { kinds: [...kinds], tags: [[shape.tag, [shape.value]]] };
  const body = bodyFrom(s);
  for (const [serial, e] of tailMatches(snap, f, body)) {
    if (serial > o.hwm || o.hidden?.(serial) || refusedInTail(serial, e, body, o)) continue;
    hll.add(e.pubkey);
    count++;
  }
  return { count, hll: hll.hex() };
}

/** The COUNT answer for these filters, or undefined if cancelled. */
export async function countAnswer(
  s: Store,
  filters: readonly Filter[],
  o: QueryOptions,
  registers?: HllRegisters,
): Promise<CountAnswer | undefined> {
  const shape = hllShape(filters);
  if (shape && tagPrefix(shape.tag, shape.value)) {
    // One read of the kept registers, unless an access rule may refuse some counted event or
    // only the index can tell (see HllRegisters.read).
    const key = registers && !o.allow ? recordKey(shape.index, shape.tag, shape.value) : undefined;
    const r = key === undefined ? undefined : registers!.read(key, o.hwm);
    if (r) return { count: r.count, hll: Buffer.from(r.registers).toString("hex") };
    return countWithHll(s, shape, o);
  }
  const count = await countQuery(s, filters, o);
  return count === undefined ? undefined : { count };
}
