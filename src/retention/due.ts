// What the retention rules and the disk budget would remove now. Found by reading the REQ
// indexes (and the events committed after their watermark, as every reader does), outside any
// write transaction and yielding to the event loop as the walk goes, so that looking for work
// holds up neither writes nor reads; the removals themselves are writer tasks (pruner.ts) that
// take these serials. Used by the relay's sweeps and by `relay prune`.

import { countByKeys } from "../indexes/key-count.ts";
import { countQuery } from "../indexes/query.ts";
import { countByKind, scanOldestFirst } from "../indexes/scan.ts";
import { STORED_ID_OFFSET, STORED_PUBKEY_OFFSET, storedKind } from "../nostr/canonical.ts";
import type { Filter } from "../nostr/filter.ts";
import type { Store } from "../store/types.ts";
import { yieldTurn } from "../yield-turn.ts";
import type { Floor, RetentionRules, Rule } from "./rules.ts";

/** One stored event as the walks hand it over. */
export interface Found {
  serial: number;
  time: number;
  id: string;
  kind: number;
  pubkey: string;
}

export interface WalkOptions {
  /** only serials at or below this are seen (the writer's committed mark) */
  hwm: number;
  /** entries walked between two yields to the event loop */
  yieldEvery: number;
  /** checked at every yield: true stops the walk (the relay is stopping) */
  cancelled?: () => boolean;
}

/** Kinds that are never evicted: each is an author's newest profile, follows or relay list. */
export const NEVER_EVICTED = new Set([0, 3, 10002]);

const MAX = Number.MAX_SAFE_INTEGER;

/**
 * Every stored event matching `f` (kinds and until only), oldest first in NIP-01 order: by
 * created_at, and among equal created_at the highest id first, so that the newest N of a walk's
 * end are the N a REQ with that limit returns.
 */
export async function* oldestFirst(s: Store, f: Filter, o: WalkOptions): AsyncGenerator<Found> {
  let group: Found[] = [];
  let walked = 0;
  for (const ev of scanOldestFirst(s, f)) {
    if (++walked % o.yieldEvery === 0) {
      await yieldTurn();
      if (o.cancelled?.()) return;
    }
    if (ev.serial > o.hwm) continue;
    const json = ev.json;
    const found: Found = {
      serial: ev.serial,
      time: ev.time,
      id: json.toString("latin1", STORED_ID_OFFSET, STORED_ID_OFFSET + 64),
      kind: storedKind(json),
      pubkey: json.toString("latin1", STORED_PUBKEY_OFFSET, STORED_PUBKEY_OFFSET + 64),
    };
    if (group.length > 0 && group[0]!.time !== found.time) {
      yield* sortedGroup(group);
      group = [];
    }
    group.push(found);
  }
  yield* sortedGroup(group);
}

function sortedGroup(group: Found[]): Found[] {
  return group.length < 2 ? group : group.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Stored events of these kinds, exactly (events removed since the indexes were written left out). */
export async function storedOfKinds(s: Store, kinds: number[], o: WalkOptions): Promise<number> {
  const f: Filter = { kinds };
  const opts = {
    hwm: o.hwm,
    defaultLimit: MAX,
    maxLimit: MAX,
    yieldEvery: o.yieldEvery,
    cancelled: o.cancelled,
  };
  return countByKeys(s, f, opts) ?? (await countQuery(s, [f], opts)) ?? 0;
}

export interface RuleDue {
  rule: Rule;
  /** the stored kinds the rule governs */
  kinds: number[];
  /** stored events of those kinds, for a rule with a count */
  stored: number | undefined;
  /** due now, oldest first, at most the `max` asked for */
  due: Found[];
  /** the walk stopped at `max`: more are due */
  more: boolean;
  /**
   * how many of `due`, at its end, only the count makes due (the others are past the time):
   * the ones to keep back if events of the rule's kinds were removed since they were counted
   */
  countOnly: number;
  /**
   * the oldest event the rule keeps once `due` is removed, when that leaves it holding exactly
   * `count` events: an arriving event older than it is past the rule (rules.ts verdict)
   */
  floor: Floor | undefined;
}

/** What one rule makes due now among its stored kinds (`now` in seconds). */
export async function dueForRule(
  s: Store,
  rule: Rule,
  kinds: number[],
  now: number,
  max: number,
  o: WalkOptions,
): Promise<RuleDue> {
  const out: RuleDue = {
    rule,
    kinds,
    stored: undefined,
    due: [],
    more: false,
    countOnly: 0,
    floor: undefined,
  };
  if (rule.time === undefined && rule.count === undefined) return out;
  // created_at < now - time, in whole seconds; a time of 0 keeps nothing at all.
  const until = rule.time === undefined ? undefined : rule.time === 0 ? MAX : Math.ceil(now - rule.time) - 1;
  let excess = 0;
  if (rule.count !== undefined) {
    out.stored = await storedOfKinds(s, kinds, o);
    excess = Math.max(0, out.stored - rule.count);
  }
  // Without a count only the events past the time are walked; with one, from the oldest.
  const f: Filter = rule.count === undefined ? { kinds, until } : { kinds };
  let kept: Found | undefined;
  for await (const e of oldestFirst(s, f, o)) {
    // Past the time is a prefix of this order (created_at ascending), and so is over the count.
    const pastTime = until !== undefined && e.time <= until;
    if (!pastTime && out.due.length >= excess) {
      kept = e;
      break;
    }
    if (out.due.length === max) {
      out.more = true;
      break;
    }
    out.due.push(e);
    if (!pastTime) out.countOnly++;
  }
  if (!out.more && kept && rule.count !== undefined && out.stored !== undefined)
    if (out.stored - out.due.length >= rule.count) out.floor = { time: kept.time, id: kept.id };
  return out;
}

/** Every rule's stored kinds: the kinds the kind index and the events after it hold. */
export function storedKinds(s: Store, rules: RetentionRules): Map<Rule, number[]> {
  const kinds: number[] = [];
  for (const [k, n] of countByKind(s)) if (n > 0) kinds.push(k);
  return rules.governed(kinds);
}

export interface EvictOptions extends WalkOptions {
  /** kinds evicted first, in this order */
  first: readonly number[];
  pinKinds: ReadonlySet<number>;
  pinAuthors: ReadonlySet<string>;
}

const kindEvictable = (kind: number, o: EvictOptions): boolean =>
  !NEVER_EVICTED.has(kind) && !o.pinKinds.has(kind);
const evictable = (e: Found, o: EvictOptions): boolean =>
  kindEvictable(e.kind, o) && !o.pinAuthors.has(e.pubkey);

/**
 * The oldest `want` evictable events: those of `first`'s kinds in its order, then every other
 * kind together, each oldest first; never kinds 0, 3 or 10002, pinned kinds or pinned authors.
 * `skip`: serials already chosen (by the rules).
 */
export async function oldestEvictable(
  s: Store,
  want: number,
  o: EvictOptions,
  skip: ReadonlySet<number> = new Set(),
): Promise<Found[]> {
  const out: Found[] = [];
  const taken = new Set<number>(skip);
  const walks: Filter[] = [...o.first.map((k) => ({ kinds: [k] })), {}];
  for (const f of walks) {
    if (out.length >= want) break;
    if (f.kinds && !kindEvictable(f.kinds[0]!, o)) continue;
    for await (const e of oldestFirst(s, f, o)) {
      if (taken.has(e.serial) || !evictable(e, o)) continue;
      taken.add(e.serial);
      out.push(e);
      if (out.length >= want) break;
    }
  }
  return out;
}
