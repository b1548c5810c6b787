// The (created_at, id) items of a filter for negentropy (NIP-77), from the planner's index:
// created_at and serial come from the index key, the id from the stored JSON at its fixed
// offset (the store keeps no serial → id map, and reading 32 bytes of a mapped page is cheaper
// than adding one: see docs/performance/2026-11.md, "Negentropy"). Bodies are parsed only where the
// index leaves part of the filter or a read rule unchecked.
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { hexBytes, readU64, serialKey } from "../store/keys.ts";
import type { Store } from "../store/types.ts";
import { yieldTurn } from "../yield-turn.ts";
import { scanPlan } from "./cursor.ts";
import { indexSnapshot } from "./indexes.ts";
import { planFilter } from "./plan.ts";
import type { QueryOptions } from "./query.ts";
import { bodyFrom, tailMatches } from "./tail.ts";

export interface ItemOptions
  extends Pick<QueryOptions, "hwm" | "hidden" | "allow" | "yieldEvery" | "cancelled"> {
  /** more matching events than this: the answer is "too-many" */
  maxItems: number;
}

/** Unsorted items: created_at per item and 32 id bytes per item. */
export interface Items {
  times: Float64Array;
  ids: Uint8Array;
}

class Collector {
  n = 0;
  times: Float64Array;
  ids: Uint8Array;
  constructor(cap: number) {
    this.times = new Float64Array(cap);
    this.ids = new Uint8Array(cap * 32);
  }
  /** false once past the cap */
  add(time: number, json: Buffer): boolean {
    if (this.n === this.times.length) {
      if (this.n >= this.max) return false;
      const grown = Math.min(this.max, this.n * 2);
      const t = new Float64Array(grown);
      t.set(this.times);
      const ids = new Uint8Array(grown * 32);
      ids.set(this.ids);
      this.times = t;
      this.ids = ids;
    }
    this.times[this.n] = time;
    // The id sits as 64 hex characters at a fixed offset of the stored JSON.
    Buffer.from(this.ids.buffer, this.ids.byteOffset + this.n * 32, 32).write(
      json.toString("latin1", STORED_ID_OFFSET, STORED_ID_OFFSET + 64),
      "hex",
    );
    this.n++;
    return true;
  }
  max = 0;
  done(): Items {
    return { times: this.times.subarray(0, this.n), ids: this.ids.subarray(0, this.n * 32) };
  }
}

/**
 * Items of every stored event matching any of the filters (limit ignored) that the reader may
 * see; "too-many" past `maxItems`, undefined if cancelled. Repeats (an event matched by two
 * filters) are left for the sort to drop.
 */
export async function collectItems(
  s: Store,
  filters: readonly Filter[],
  o: ItemOptions,
): Promise<Items | "too-many" | undefined> {
  const c = new Collector(Math.min(o.maxItems, 4096) || 1);
  c.max = o.maxItems;
  const snap = indexSnapshot(s);
  const visible = (serial: number): boolean => serial <= o.hwm && !o.hidden?.(serial);
  const allowed = (json: Buffer): boolean => !o.allow || o.allow(json.toString("utf8"));
  let sinceYield = 0;
  for (const f of filters) {
    const plan = planFilter(s, f);
    if (plan.type === "empty") continue;
    if (plan.type === "ids") {
      for (const id of plan.ids) {
        const v = s.ids.get(hexBytes(id));
        if (!v) continue;
        const serial = readU64(v, 0);
        const json = s.events.getBinary(serialKey(serial));
        if (!json || !visible(serial) || !allowed(json)) continue;
        const e = JSON.parse(json.toString("utf8")) as NostrEvent;
        if (matchFilter(f, e) && !c.add(e.created_at, json)) return "too-many";
      }
      continue;
    }
    const scan = scanPlan(plan, f, 1024, "oldest");
    let last = -1;
    for (let k = scan.next(); k; k = scan.next()) {
      if (++sinceYield >= o.yieldEvery * 8) {
        sinceYield = 0;
        await yieldTurn();
        if (o.cancelled?.()) return undefined;
      }
      if (k.serial === last || k.serial > snap.through || !visible(k.serial)) continue;
      last = k.serial;
      // Only the id is needed unless something must be checked on the body: then a copy.
      const parse = plan.needsCheck || o.allow !== undefined;
      const key = serialKey(k.serial);
      const json = parse ? s.events.getBinary(key) : s.events.getBinaryFast(key);
      if (!json) continue; // removed since its entries were written
      if (plan.needsCheck && !matchFilter(f, JSON.parse(json.toString("utf8")) as NostrEvent)) continue;
      if (!allowed(json)) continue;
      if (!c.add(k.time, json)) return "too-many";
    }
    // Events after the indexes' watermark are matched directly.
    for (const [serial, e] of tailMatches(snap, f, bodyFrom(s))) {
      if (!visible(serial)) continue;
      const json = s.events.getBinary(serialKey(serial));
      if (!json || !allowed(json)) continue;
      if (!c.add(e.created_at, json)) return "too-many";
    }
  }
  return c.done();
}
