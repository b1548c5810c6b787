// Answers filters that carry `search`. Every query word must occur in a result (AND). Every
// match comes from intersecting the words' postings (intersect.ts), or, for a ranked search of
// common words, the best ones from their high-impact lists (high-walk.ts). The index covers the log up to its consumer's watermark; the documents committed
// after it come from the consumer's views, and the documents removed since from its views too,
// so a search sees exactly what is committed. Scores use the corpus statistics of the same
// snapshot, so the answer does not depend on how far the consumer has got.
// Kinds, since and until are checked on the posting; ids, authors, tags and `language:` need
// the event, which is loaded only for candidates in rank order until the limit is filled.
// Ranking: BM25 descending, then created_at descending, then id ascending; `limit` is applied
// after ranking (NIP-50), keeping the whole tie group at the cut so the cut is deterministic.
// A ranked search first tries the words' high-impact lists (impact.ts): when the limit-th best
// of the documents they name scores above what any other document can, that is the exact
// answer, from a few thousand documents instead of every match. COUNT walks every match.

import type { QueryOptions, Searcher, SearchHit } from "../indexes/query.ts";
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import { yieldTurn } from "../yield-turn.ts";
import { Candidates, rankOrder } from "./candidates.ts";
import type { SearchIndex } from "./consumer.ts";
import { eventLanguages } from "./fields.ts";
import { highCandidates, highListsTried } from "./high-walk.ts";
import { allCandidates } from "./intersect.ts";
import type { Prepared, Setup } from "./plan.ts";
import { addViews, prepare, setUp } from "./plan.ts";
import type { WalkOffload, WalkReply } from "./remote.ts";
import { addReply, walkRequest } from "./remote.ts";

/** How searches were answered: from the high lists alone, or by ranking every match. */
export const searchPaths = { high: 0, all: 0 };

/** The reader may see the event and it passes the filter's other conditions. */
function admits(p: Prepared, json: string, o: QueryOptions): boolean {
  if (p.checksAccess && o.allow && !o.allow(json)) return false;
  if (!p.needsEvent) return true;
  const e = JSON.parse(json) as NostrEvent;
  if (!matchFilter(p.rest, e)) return false;
  const langs = p.q.languages;
  return langs.length === 0 || eventLanguages(e).some((l) => langs.includes(l));
}

/** The best `limit` results of a search filter, best first; undefined if cancelled. */
async function searchFilter(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  limit: number,
  o: QueryOptions,
  off: WalkOffload | undefined,
): Promise<SearchHit[] | undefined> {
  const p = prepare(f, o);
  if (!p || limit === 0) return [];
  const u = setUp(ix, f, p, o);
  if (!u) return [];
  let c = Candidates.take();
  try {
    // The high lists first: when the limit-th best of their documents scores above what any
    // other document can, that is the answer (impact.ts). Otherwise every match is ranked.
    const bound = await highWalk(ix, u, o, c, limit, off);
    if (bound === false) return undefined;
    if (bound !== undefined) {
      const hits = await best(s, p, c, limit, o);
      if (hits === undefined) return undefined;
      if (hits.length === limit && hits[limit - 1]!.score > bound) {
        searchPaths.high++;
        return unscored(hits);
      }
      c.release();
      c = Candidates.take();
    }
    searchPaths.all++;
    c.keepBest(ranked(p, limit));
    return (await allWalk(ix, u, o, c, off)) ? unscored(await best(s, p, c, limit, o)) : undefined;
  } finally {
    c.release();
  }
}

/**
 * A walk on the other thread (remote.ts) when it may take one and the walk can go, with the
 * views' documents added here; undefined when it is to run here, or failed there.
 */
async function remoteWalk(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
  high: boolean,
  limit: number,
  off: WalkOffload | undefined,
): Promise<WalkReply | undefined> {
  // Only walks long enough to be worth the crossing (SearchIndex.offloadFrom), to the thread
  // with fewer walks in hand (a million events, 8 searches in flight: a fixed two or six in
  // flight there gave a p99 of 20 ms, sharing them 16-17 ms).
  if (u.words[0]!.df < ix.offloadFrom || !off?.ready() || off.inFlight() > localWalks) return undefined;
  const req = walkRequest(ix, u, o, high, limit, c.keeping);
  if (!req) return undefined;
  const r = await off.walk(req).catch(() => undefined);
  if (!r || r.error !== undefined) {
    remoteWalks.failed++;
    return undefined;
  }
  remoteWalks.count++;
  addReply(c, r);
  addViews(u, c);
  return r;
}

/** highCandidates, on the other thread when it takes it. */
async function highWalk(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
  limit: number,
  off: WalkOffload | undefined,
): Promise<number | undefined | false> {
  if (!highListsTried(ix, u)) return undefined;
  const r = await remoteWalk(ix, u, o, c, true, limit, off);
  if (!r) return local(() => highCandidates(ix, u, o, c, limit));
  if (o.cancelled?.()) return false;
  if (r.bound !== null) return r.bound;
  // The lists did not decide: the candidates go, and every match is ranked.
  c.n = 0;
  return undefined;
}

/** allCandidates, on the other thread when it takes it. */
async function allWalk(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
  off: WalkOffload | undefined,
): Promise<boolean> {
  if (await remoteWalk(ix, u, o, c, false, 0, off)) return !o.cancelled?.();
  return local(() => allCandidates(ix, u, o, c));
}

/** Walks running on this thread now. */
let localWalks = 0;

async function local<T>(walk: () => Promise<T>): Promise<T> {
  localWalks++;
  try {
    return await walk();
  } finally {
    localWalks--;
  }
}

/** Walks run on the other thread since start, and sent there but run here after it failed (/metrics). */
export const remoteWalks = { count: 0, failed: 0 };

/**
 * How many of the best candidates can hold a search's results: `limit` with a little slack
 * (an event removed since the snapshot is skipped when loaded), or 0 when every candidate may
 * be needed because the loaded events decide (other conditions of the filter, access rules).
 */
const ranked = (p: Prepared, limit: number): number => (p.needsEvent || p.checksAccess ? 0 : limit * 2 + 16);

/** The best `limit` candidates the reader may see, loaded; undefined if cancelled. */
async function best(
  s: Store,
  p: Prepared,
  c: Candidates,
  limit: number,
  o: QueryOptions,
): Promise<ScoredHit[] | undefined> {
  const order = rankOrder(c, ranked(p, limit) || c.n);
  const hits: ScoredHit[] = [];
  let cutScore = Number.NaN;
  let cutTime = Number.NaN;
  let sinceYield = 0;
  for (const k of order) {
    const score = c.score[k]!;
    const time = c.time[k]!;
    if (hits.length >= limit && (score !== cutScore || time !== cutTime)) break;
    if (++sinceYield >= o.yieldEvery) {
      sinceYield = 0;
      await yieldTurn();
      if (o.cancelled?.()) return undefined;
    }
    const serial = c.serial[k]!;
    const json = readEvent(s, serial);
    if (json === undefined || !admits(p, json, o)) continue;
    hits.push({ time, serial, json, score });
    if (hits.length === limit) {
      cutScore = score;
      cutTime = time;
    }
  }
  const id = (h: SearchHit) => h.json.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64);
  hits.sort((a, b) => b.score - a.score || b.time - a.time || (id(a) < id(b) ? -1 : 1));
  return hits.slice(0, limit);
}

type ScoredHit = SearchHit & { score: number };

const unscored = (hits: ScoredHit[] | undefined): SearchHit[] | undefined =>
  hits?.map(({ time, serial, json }) => ({ time, serial, json }));

/** Adds the serial of every event matching a search filter to `seen`; false if cancelled. */
async function searchCount(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  seen: Set<number>,
  o: QueryOptions,
  off: WalkOffload | undefined,
): Promise<boolean> {
  const p = prepare(f, o);
  if (!p) return true;
  const u = setUp(ix, f, p, o);
  if (!u) return true;
  const c = Candidates.take();
  try {
    return (await allWalk(ix, u, o, c, off)) && (await countInto(s, p, c, seen, o));
  } finally {
    c.release();
  }
}

async function countInto(
  s: Store,
  p: Prepared,
  c: Candidates,
  seen: Set<number>,
  o: QueryOptions,
): Promise<boolean> {
  let sinceYield = 0;
  for (let k = 0; k < c.n; k++) {
    const serial = c.serial[k]!;
    if (seen.has(serial)) continue;
    if (p.needsEvent || p.checksAccess) {
      if (++sinceYield >= o.yieldEvery) {
        sinceYield = 0;
        await yieldTurn();
        if (o.cancelled?.()) return false;
      }
      const json = readEvent(s, serial);
      if (json === undefined || !admits(p, json, o)) continue;
    }
    seen.add(serial);
  }
  return true;
}

/**
 * The search engine over one index, as the store's queries use it; with `off`, walks are shared
 * with the thread it names.
 */
export function searcher(ix: SearchIndex, off?: WalkOffload): Searcher {
  return {
    filter: (s, f, limit, o) => searchFilter(ix, s, f, limit, o, off),
    count: (s, f, seen, o) => searchCount(ix, s, f, seen, o, off),
  };
}
