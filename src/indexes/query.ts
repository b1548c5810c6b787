// Answers stored queries: runs each filter on its planned index, stops at its limit (keeping the
// whole group of events that tie on created_at at the cut, so ties resolve by id as NIP-01 asks),
// unions the filters and returns stored JSON newest first. Long scans yield between chunks.

import { STORED_ID_OFFSET, STORED_PUBKEY_OFFSET, storedCreatedAt, storedKind } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { hexBytes, readU64, serialProbe } from "../store/keys.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import { yieldTurn } from "../yield-turn.ts";
import type { FramePack, FramePrefix } from "./answer.ts";
import { answerOf, answerOfText, idAt, text } from "./answer.ts";
import { scanPlan } from "./cursor.ts";
import { indexSnapshot } from "./indexes.ts";
import { countByKeys } from "./key-count.ts";
import { newestOf } from "./newest.ts";
import type { Plan } from "./plan.ts";
import { planFilter } from "./plan.ts";
import type { IndexSnapshot } from "./tail.ts";
import { bodyFrom, refusedInTail, removedIn, tailMatches } from "./tail.ts";

/** One result of a search filter, in the engine's rank order. */
export interface SearchHit {
  time: number;
  serial: number;
  /** the stored JSON, or the whole EVENT frame when the query was given `frame` */
  json: string;
  /** where the id starts in `json` (STORED_ID_OFFSET when absent) */
  at?: number;
}

/** NIP-50 search over the store, provided by the search consumer (registered by the relay). */
export interface Searcher {
  /** the best `limit` results of a filter with `search`, best first; undefined if cancelled */
  filter(s: Store, f: Filter, limit: number, o: QueryOptions): Promise<SearchHit[] | undefined>;
  /** adds the serial of every match to `seen`; false if cancelled */
  count(s: Store, f: Filter, seen: Set<number>, o: QueryOptions): Promise<boolean>;
}

export interface QueryOptions {
  /** only serials at or below this are visible (the writer's committed high-water mark) */
  hwm: number;
  defaultLimit: number;
  maxLimit: number;
  yieldEvery: number;
  /** checked at every yield; true stops the scan */
  cancelled?: () => boolean;
  /** told which index each filter used (metrics) */
  onPlan?: (index: string) => void;
  /** serials that must not be seen although still stored (e.g. expired, awaiting purge) */
  hidden?: (serial: number) => boolean;
  /** per-reader access rule on the stored JSON (it should parse only what it must) */
  allow?: (json: string) => boolean;
  /** `allow` only ever refuses events of kinds for which this is true (undefined: any kind) */
  restrictedKind?: (kind: number) => boolean;
  /** the same kinds as a list, when known (key counts check that none is stored) */
  restrictedKinds?: readonly number[];
  /** false when `hidden` hides nothing at this moment (no expired event awaits its purge) */
  anyHidden?: () => boolean;
  /** answers filters with `search`; without it they match nothing */
  search?: Searcher;
  /**
   * When given, each answer is a whole EVENT frame (this prefix, the stored JSON, `]`) built
   * from the stored bytes in one decode: no string of the stored JSON first and no second one
   * when the two are joined for the socket (half the allocation of a REQ's answer).
   */
  frame?: FramePrefix;
  /** When given (a reader thread), index hits put their answers here and carry their number. */
  pack?: FramePack;
}

/** The reader may see the event and it passes what the index left unchecked. */
function admits(
  f: Filter,
  json: string,
  o: QueryOptions,
  residual: "none" | "fast" | "full" = "full",
): boolean {
  if (o.allow && !o.allow(json)) return false;
  if (residual === "none") return true;
  if (residual === "fast") return passesFast(f, json);
  return matchFilter(f, JSON.parse(json) as NostrEvent);
}

/**
 * Only kinds and authors are left to check: both sit at known places in the stored record, read
 * from the text or from the stored bytes before they are decoded (a candidate refused there,
 * often a long contact list under `#p`, is never turned into a string).
 */
function passesFast(f: Filter, json: string | Buffer): boolean {
  if (f.kinds && !f.kinds.includes(storedKind(json))) return false;
  return authorPasses(f, json);
}

function authorPasses(f: Filter, json: string | Buffer): boolean {
  if (!f.authors) return true;
  const end = STORED_PUBKEY_OFFSET + 64;
  const pubkey =
    typeof json === "string"
      ? json.slice(STORED_PUBKEY_OFFSET, end)
      : json.toString("latin1", STORED_PUBKEY_OFFSET, end);
  return f.authors.includes(pubkey);
}

/**
 * A candidate: `json` is decoded when it will likely be sent; an event past the limit, kept
 * only because it ties on created_at with the cut, carries its `id` alone until the order is
 * settled (a burst of events in one second would otherwise all be decoded for nothing).
 */
export interface Hit {
  time: number;
  serial: number;
  json: string | undefined;
  /** its answer's number in QueryOptions.pack, when the answer went there */
  frame?: number;
  at?: number;
  id?: string;
}

const idOf = (h: Hit): string => {
  if (h.id !== undefined) return h.id;
  const at = h.at ?? STORED_ID_OFFSET;
  return h.json!.slice(at, at + 64);
};
const byNewest = (a: Hit, b: Hit): number => {
  if (a.time !== b.time) return b.time - a.time;
  const x = idOf(a);
  const y = idOf(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Kinds of stored events by serial, as byte checks read them: a `#p` filter with kinds meets the
 * same long contact lists REQ after REQ (a popular pubkey's followers), each copied whole to
 * read its kind. A serial's kind never changes, and an entry left by a removed event is
 * harmless (the body read that would follow finds nothing). Per store, cleared when full.
 */
const kinds = new WeakMap<Store, Map<number, number>>();
const KINDS_KEPT = 65_536;

function kindsSeen(s: Store): Map<number, number> {
  const m = kinds.get(s);
  if (m) return m;
  const fresh = new Map<number, number>();
  kinds.set(s, fresh);
  return fresh;
}

/** passesFast on the bytes, noting the kind it read. */
function passesChecked(f: Filter, b: Buffer, serial: number, seen: Map<number, number>): boolean {
  if (f.kinds) {
    const kind = storedKind(b);
    if (seen.size >= KINDS_KEPT) seen.clear();
    seen.set(serial, kind);
    if (!f.kinds.includes(kind)) return false;
  }
  return authorPasses(f, b);
}

/**
 * A candidate that only kinds and authors are left to check: its stored bytes when it passes,
 * undefined when it is refused (by a kind seen before, without a read) or gone.
 */
function fastCandidate(s: Store, f: Filter, serial: number, seen: Map<number, number>): Buffer | undefined {
  const known = f.kinds ? seen.get(serial) : undefined;
  if (known !== undefined && !f.kinds!.includes(known)) return undefined;
  const b = bytesOf(s, serial);
  return b !== undefined && passesChecked(f, b, serial, seen) ? b : undefined;
}

/** A stored record's bytes: a view of lmdb-js's shared buffer, valid until the next read. */
const bytesOf = (s: Store, serial: number): Buffer | undefined => s.events.getBinaryFast(serialProbe(serial));

/**
 * The reader's access rule on a stored record's bytes: it can only refuse restricted kinds (DMs,
 * gift wraps), so any other kind is let through without decoding the record.
 */
function refusedOnBytes(b: Buffer, o: QueryOptions): boolean {
  if (!o.allow) return false;
  if (o.restrictedKind && !o.restrictedKind(storedKind(b))) return false;
  return !o.allow(text(b));
}

const idBytes = (b: Buffer): string => b.toString("latin1", STORED_ID_OFFSET, STORED_ID_OFFSET + 64);

export const effectiveLimit = (f: Filter, o: Pick<QueryOptions, "defaultLimit" | "maxLimit">): number =>
  Math.min(f.limit ?? o.defaultLimit, o.maxLimit);

const load = readEvent;

/**
 * The events after the indexes' watermark that match a filter and the reader may see: they
 * have no index entries yet, so they are matched directly (there are at most a consumer
 * batch of them, a few thousand while events pour in and none once it has caught up).
 */
function tailHits(s: Store, f: Filter, snap: IndexSnapshot, o: QueryOptions): Hit[] {
  const out: Hit[] = [];
  const body = bodyFrom(s);
  // Each with its id alone: the bodies are read for the hits kept (firstByNewest), not for
  // every match (the kind 1 shape matches thousands of events in a full backlog).
  for (const [serial, e] of tailMatches(snap, f, body)) {
    if (serial > o.hwm || o.hidden?.(serial) || refusedInTail(serial, e, body, o)) continue;
    out.push({ time: e.created_at, serial, json: undefined, id: e.id });
  }
  return out;
}

/** The first `limit` hits by NIP-01 order, each with its answer (read now for those kept by id). */
function firstByNewest(s: Store, all: Hit[], limit: number, fp: FramePrefix | undefined): SearchHit[] {
  all.sort(byNewest);
  if (all.length > limit) all.length = limit;
  const out: SearchHit[] = [];
  const at = idAt(fp);
  for (const h of all) {
    // Removed since it was seen (a yield came between): left out, as if read a moment later.
    let json = h.json;
    if (json === undefined) {
      const b = bytesOf(s, h.serial);
      json = b && answerOf(b, fp);
    }
    if (json !== undefined) out.push({ time: h.time, serial: h.serial, json, at });
  }
  return out;
}

/** One filter's hits, at most `limit` of them by NIP-01 order, or undefined if cancelled. */
async function runFilter(
  s: Store,
  f: Filter,
  plan: Plan,
  limit: number,
  o: QueryOptions,
  snap: IndexSnapshot,
): Promise<SearchHit[] | undefined> {
  const hits = await indexHits(s, f, plan, limit, o, snap);
  if (!hits) return undefined;
  return withTail(s, f, plan.type, hits, limit, o, snap);
}

/**
 * The answer of one filter from its index part (`hits`, indexHits) and the snapshot's tail: the
 * union cut at `limit`, which is the NIP-01 answer. An `ids` plan has no tail: its lookups see
 * every stored event.
 */
export function withTail(
  s: Store,
  f: Filter,
  plan: Plan["type"],
  hits: Hit[],
  limit: number,
  o: QueryOptions,
  snap: IndexSnapshot,
): SearchHit[] {
  if (plan === "empty" || limit === 0) return [];
  const tail = plan === "ids" ? [] : tailHits(s, f, snap, o);
  return firstByNewest(s, tail.length === 0 ? hits : hits.concat(tail), limit, o.frame);
}

/**
 * One filter's hits from its index up to the snapshot's watermark (`snap.through`), or by id:
 * every event that can be among its first `limit` by NIP-01 order, those tying on created_at at
 * the cut included (with their ids only); undefined if cancelled. The events after the watermark
 * are the tail's (withTail). A reader thread runs this part, the main thread the tail.
 */
export async function indexHits(
  s: Store,
  f: Filter,
  plan: Plan,
  limit: number,
  o: QueryOptions,
  snap: IndexSnapshot,
): Promise<Hit[] | undefined> {
  if (plan.type === "empty" || limit === 0) return [];
  const hits: Hit[] = [];
  const at = idAt(o.frame);
  // The answer of a hit kept: its frame, or its number in the pack the frames go to.
  const pack = o.pack;
  const fromBytes = (time: number, serial: number, b: Buffer): Hit =>
    pack
      ? { time, serial, json: undefined, frame: pack.addBytes(b), at }
      : { time, serial, json: answerOf(b, o.frame), at };
  const fromText = (time: number, serial: number, json: string): Hit =>
    pack
      ? { time, serial, json: undefined, frame: pack.addText(json), at }
      : { time, serial, json: answerOfText(json, o.frame), at };
  if (plan.type === "ids") {
    const residual = idsResidual(f);
    for (const id of plan.ids) {
      const v = s.ids.getBinaryFast(hexBytes(id));
      if (!v) continue;
      const serial = readU64(v, 0);
      if (serial > o.hwm || o.hidden?.(serial)) continue;
      const b = bytesOf(s, serial);
      if (b === undefined) continue;
      const time = storedCreatedAt(b);
      if ((f.since !== undefined && time < f.since) || (f.until !== undefined && time > f.until)) continue;
      if (residual === "fast" && !passesFast(f, b)) continue;
      const rest = residual === "fast" ? "none" : residual;
      if (rest === "none") {
        if (!refusedOnBytes(b, o)) hits.push(fromBytes(time, serial, b));
        continue;
      }
      const json = text(b);
      if (!admits(f, json, o, rest)) continue;
      hits.push(fromText(time, serial, json));
    }
    return hits;
  }
  // A pubkind scan opens a range only once it can hold an answer (newest.ts).
  const newest = plan.pairs && newestOf(s)?.bounds(s, plan.pairs.authors, plan.pairs.kinds, snap);
  const scan = scanPlan(plan, f, Math.min(limit + 1, 256), "newest", newest);
  const fast = plan.residual === "fast";
  // What is left after a check on the bytes: the full match (on the text), or nothing but the
  // reader's access rule (read on the bytes, see refusedOnBytes).
  const rest = fast ? "none" : plan.residual;
  const decodeAlways = rest !== "none";
  const knownKinds = fast ? kindsSeen(s) : undefined;
  let lastSerial = -1;
  let cutTime = -1;
  let sinceYield = 0;
  for (let k = scan.next(); k; k = scan.next()) {
    if (++sinceYield >= o.yieldEvery) {
      sinceYield = 0;
      await yieldTurn();
      if (o.cancelled?.()) return undefined;
    }
    // Entries above the snapshot's watermark (a batch applied since) come from its tail.
    if (k.serial === lastSerial || k.serial > o.hwm || k.serial > snap.through) continue;
    lastSerial = k.serial;
    if (cutTime !== -1 && k.time < cutTime) break;
    if (o.hidden?.(k.serial)) continue;
    // The bytes first when they can refuse the candidate; else the text straight away (one read).
    const b = knownKinds ? fastCandidate(s, f, k.serial, knownKinds) : undefined;
    if (knownKinds && b === undefined) continue;
    if (decodeAlways) {
      const json = b ? text(b) : load(s, k.serial);
      if (json === undefined || !admits(f, json, o, rest)) continue;
      hits.push(fromText(k.time, k.serial, json));
    } else {
      const stored = b ?? bytesOf(s, k.serial);
      if (stored === undefined || refusedOnBytes(stored, o)) continue;
      if (cutTime === -1) hits.push(fromBytes(k.time, k.serial, stored));
      else hits.push({ time: k.time, serial: k.serial, json: undefined, id: idBytes(stored) });
    }
    if (hits.length === limit) cutTime = k.time;
  }
  // The index part holds every indexed event that can be in the first `limit` (ties at its cut
  // included), so the union with the tail's matches, cut at `limit`, is the NIP-01 answer.
  return hits;
}

/** What an `ids` filter leaves to check on each event besides since and until. */
function idsResidual(f: Filter): "none" | "fast" | "full" {
  if (f.tags !== undefined || f.search !== undefined) return "full";
  return f.kinds !== undefined || f.authors !== undefined ? "fast" : "none";
}

/** Stored events matching any filter, newest first, each once; undefined if cancelled. */
export async function runQuery(
  s: Store,
  filters: readonly Filter[],
  o: QueryOptions,
): Promise<string[] | undefined> {
  const snap = indexSnapshot(s);
  const results: SearchHit[][] = [];
  for (const f of filters) {
    if (f.search !== undefined) {
      o.onPlan?.("search");
      const hits = o.search ? await o.search.filter(s, f, effectiveLimit(f, o), o) : [];
      if (!hits) return undefined;
      const fp = o.frame;
      results.push(fp ? hits.map((h) => ({ ...h, json: answerOfText(h.json, fp), at: idAt(fp) })) : hits);
      continue;
    }
    const plan = planFilter(s, f);
    o.onPlan?.(plan.type === "scan" ? plan.index : plan.type);
    const hits = await runFilter(s, f, plan, effectiveLimit(f, o), o, snap);
    if (!hits) return undefined;
    results.push(hits);
  }
  return unionOf(filters, results);
}

/** The filters' answers as one, each event once, newest first (search results in rank order). */
function unionOf(filters: readonly Filter[], results: SearchHit[][]): string[] {
  if (results.length === 1) return results[0]!.map((h) => h.json);
  const union = new Map<number, SearchHit>();
  for (const hits of results) for (const h of hits) union.set(h.serial, h);
  // Search results keep their rank order: then the filters are answered one after another.
  if (filters.some((f) => f.search !== undefined)) return [...union.values()].map((h) => h.json);
  return [...union.values()].sort(byNewest).map((h) => h.json);
}

/** What a reader thread found for one filter of a REQ (readers/): its plan and its index hits. */
export interface IndexPart {
  plan: Plan["type"];
  /** the index it scanned (metrics) */
  index: string;
  hits: Hit[];
}

/**
 * A REQ's stored answer from the index parts a reader thread found up to `snap.through` and the
 * tail of `snap`, this thread's snapshot that `through` was taken from: the same answer runQuery
 * gives.
 */
export function answerFromParts(
  s: Store,
  filters: readonly Filter[],
  parts: readonly IndexPart[],
  o: QueryOptions,
  snap: IndexSnapshot,
): string[] {
  const results = filters.map((f, i) =>
    withTail(s, f, parts[i]!.plan, parts[i]!.hits, effectiveLimit(f, o), o, snap),
  );
  return unionOf(filters, results);
}

/**
 * A reader thread's part of a REQ (readers/worker.ts): each filter's index hits up to `through`
 * (the watermark of the main thread's snapshot, whose tail it adds), or undefined if cancelled.
 * Filters with `search` are not sent here.
 */
export async function indexParts(
  s: Store,
  filters: readonly Filter[],
  o: QueryOptions,
  through: number,
): Promise<IndexPart[] | undefined> {
  const snap: IndexSnapshot = { w: undefined, through, views: [] };
  const parts: IndexPart[] = [];
  for (const f of filters) {
    const plan = planFilter(s, f);
    const hits = await indexHits(s, f, plan, effectiveLimit(f, o), o, snap);
    if (!hits) return undefined;
    parts.push({ plan: plan.type, index: plan.type === "scan" ? plan.index : plan.type, hits });
  }
  return parts;
}

/** Exact number of stored events matching any filter (limit ignored), or undefined if cancelled. */
export async function countQuery(
  s: Store,
  filters: readonly Filter[],
  o: QueryOptions,
): Promise<number | undefined> {
  if (filters.length === 1) {
    const n = countByKeys(s, filters[0]!, o);
    if (n !== undefined) return n;
  }
  const snap = indexSnapshot(s);
  const seen = new Set<number>();
  const knownKinds = kindsSeen(s);
  let sinceYield = 0;
  for (const f of filters) {
    if (f.search !== undefined) {
      if (o.search && !(await o.search.count(s, f, seen, o))) return undefined;
      continue;
    }
    const plan = planFilter(s, f);
    if (plan.type === "empty") continue;
    if (plan.type === "ids") {
      const hits = await runFilter(s, f, plan, Number.MAX_SAFE_INTEGER, o, snap);
      if (!hits) return undefined;
      for (const h of hits) seen.add(h.serial);
      continue;
    }
    const scan = scanPlan(plan, f, 1024);
    for (let k = scan.next(); k; k = scan.next()) {
      if (++sinceYield >= o.yieldEvery * 8) {
        sinceYield = 0;
        await yieldTurn();
        if (o.cancelled?.()) return undefined;
      }
      if (k.serial > o.hwm || k.serial > snap.through || seen.has(k.serial) || o.hidden?.(k.serial)) continue;
      // Counted on keys alone, an event removed since its entries were written must be left out.
      if (removedIn(snap, k.serial)) continue;
      if (plan.residual === "full") {
        const json = load(s, k.serial);
        if (json === undefined || !admits(f, json, o, "full")) continue;
      } else if (plan.residual === "fast" || o.allow) {
        // Kinds, authors and the reader's access rule, read on the stored bytes as a REQ does.
        const b = plan.residual === "fast" ? fastCandidate(s, f, k.serial, knownKinds) : bytesOf(s, k.serial);
        if (b === undefined || refusedOnBytes(b, o)) continue;
      }
      seen.add(k.serial);
    }
    for (const h of tailHits(s, f, snap, o)) seen.add(h.serial);
  }
  return seen.size;
}
