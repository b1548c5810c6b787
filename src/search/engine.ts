// Answers filters that carry `search`. Every query word must occur in a result (AND). The
// rarest word's postings are walked in serial order and the other words' postings intersected
// with them, block by block (blocks whose last serial is below the next candidate are skipped
// undecoded). The index covers the log up to its consumer's watermark; the documents committed
// after it come from the consumer's views, and the documents removed since from its views too,
// so a search sees exactly what is committed. Scores use the corpus statistics of the same
// snapshot, so the answer does not depend on how far the consumer has got.
// Kinds, since and until are checked on the posting; ids, authors, tags and `language:` need
// the event, which is loaded only for candidates in rank order until the limit is filled.
// Ranking: BM25 descending, then created_at descending, then id ascending; `limit` is applied
// after ranking (NIP-50), keeping the whole tie group at the cut so the cut is deterministic.
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import type { QueryOptions, Searcher, SearchHit } from "../store/query.ts";
import type { Store } from "../store/store.ts";
import { readEvent } from "../store/store.ts";
import { BlockCursor, blockKey, readHeader, tokenBounds, tokenPrefix } from "./blocks.ts";
import { idf, termScore } from "./bm25.ts";
import type { SearchIndex } from "./consumer.ts";
import { eventLanguages } from "./fields.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";

interface Prepared {
  q: SearchQuery;
  /** the filter without `search`, checked on loaded events */
  rest: Filter;
  kinds: Set<number> | undefined;
  needsEvent: boolean;
}

/** Candidates as parallel arrays, ascending by serial. */
interface Candidates {
  serial: number[];
  time: number[];
  length: number[];
  score: number[];
}

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));
const BLOCKS_PER_READ = 32;

function prepare(f: Filter): Prepared | undefined {
  if (f.search === undefined) return undefined;
  const q = parseSearch(f.search);
  if (q.words.length === 0) return undefined;
  const { search: _, ...rest } = f;
  const needsEvent =
    f.ids !== undefined || f.authors !== undefined || f.tags !== undefined || q.languages.length > 0;
  return { q, rest, kinds: f.kinds && new Set(f.kinds), needsEvent };
}

/**
 * A token's stored blocks in serial order, read in groups so no read transaction is held across
 * turns; undefined when cancelled. Blocks whose last serial is below `from()` are not returned.
 */
async function* blocksOf(
  ix: SearchIndex,
  prefix: Uint8Array,
  from: () => number,
  o: QueryOptions,
): AsyncGenerator<Uint8Array, boolean> {
  let { start } = tokenBounds(prefix);
  const { end } = tokenBounds(prefix);
  for (;;) {
    const got: Uint8Array[] = [];
    let lastKey: Buffer | undefined;
    let n = 0;
    for (const { key, value } of ix.blocks.getRange({ start, end, limit: BLOCKS_PER_READ })) {
      n++;
      lastKey = key as Buffer;
      const v = value as Buffer;
      if (readHeader(v).lastSerial >= from()) got.push(Buffer.from(v));
    }
    for (const v of got) yield v;
    if (!lastKey || n < BLOCKS_PER_READ) return true;
    const k = Buffer.from(lastKey);
    start = blockKey(k.subarray(0, k.length - 8), readU64Plus1(k));
    if (start.compare(end) >= 0) return true;
    await yieldTurn();
    if (o.cancelled?.()) return false;
  }
}

/** The key right after a block key (its first serial plus one). */
function readU64Plus1(k: Buffer): number {
  const at = k.length - 8;
  return k.readUInt32BE(at) * 0x1_0000_0000 + k.readUInt32BE(at + 4) + 1;
}

/**
 * Every event containing all words, scored; undefined if cancelled. `hwm` bounds what is
 * visible; removed documents and events `hidden` (expired) are left out.
 */
async function candidates(
  ix: SearchIndex,
  f: Filter,
  p: Prepared,
  o: QueryOptions,
): Promise<Candidates | undefined> {
  const empty: Candidates = { serial: [], time: [], length: [], score: [] };
  const since = f.since ?? 0;
  const until = f.until ?? Number.MAX_SAFE_INTEGER;
  if (since > until || p.kinds?.size === 0) return empty;
  // Everything below is read from one snapshot: the watermark, the statistics and the views.
  const snap = ix.snapshot();
  const words = p.q.words.map((token) => ({
    token,
    prefix: tokenPrefix(token),
    df: ix.docFrequency(snap, token),
  }));
  if (words.some((w) => w.df <= 0)) return empty;
  words.sort((a, b) => a.df - b.df || (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const avg = snap.docs > 0 ? snap.totalLength / snap.docs : 1;
  const idfs = words.map((w) => idf(snap.docs, w.df));
  const stored = snap.w?.serial ?? 0;
  const removed = new Set<number>();
  for (const v of snap.views) for (const serial of v.removed.keys()) removed.add(serial);
  const kinds = p.kinds;
  const gone = snap.gone;
  const visible = (serial: number, kind: number, time: number): boolean =>
    serial <= o.hwm &&
    time >= since &&
    time <= until &&
    (!kinds || kinds.has(kind)) &&
    !removed.has(serial) &&
    !gone.has(serial) &&
    !o.hidden?.(serial);

  // The rarest word's stored postings (a flush after this snapshot may add serials above it).
  let c: Candidates = { serial: [], time: [], length: [], score: [] };
  const gen0 = blocksOf(ix, words[0]!.prefix, () => 0, o);
  for (;;) {
    const r = await gen0.next();
    if (r.done) {
      if (!r.value) return undefined;
      break;
    }
    const cur = new BlockCursor(r.value);
    while (cur.next()) {
      if (cur.serial > stored) break;
      if (!visible(cur.serial, cur.kind, cur.createdAt)) continue;
      c.serial.push(cur.serial);
      c.time.push(cur.createdAt);
      c.length.push(cur.length);
      c.score.push(termScore(idfs[0]!, cur.tf, cur.length, avg));
    }
  }
  // Each further word keeps the candidates it also holds.
  for (let i = 1; i < words.length && c.serial.length > 0; i++) {
    const next: Candidates = { serial: [], time: [], length: [], score: [] };
    let j = 0;
    const gen = blocksOf(ix, words[i]!.prefix, () => c.serial[j] ?? Number.MAX_SAFE_INTEGER, o);
    for (;;) {
      const r = await gen.next();
      if (r.done) {
        if (!r.value) return undefined;
        break;
      }
      const cur = new BlockCursor(r.value);
      while (cur.next() && j < c.serial.length) {
        if (cur.serial > stored) break;
        while (j < c.serial.length && c.serial[j]! < cur.serial) j++;
        if (j < c.serial.length && c.serial[j] === cur.serial) {
          next.serial.push(cur.serial);
          next.time.push(c.time[j]!);
          next.length.push(c.length[j]!);
          next.score.push(c.score[j]! + termScore(idfs[i]!, cur.tf, c.length[j]!, avg));
          j++;
        }
      }
      if (j >= c.serial.length) {
        await gen.return(true);
        break;
      }
    }
    c = next;
  }
  // Documents committed after the watermark, from the views (their serials are all above it).
  for (const v of snap.views)
    for (const [serial, doc] of v.docs) {
      if (!visible(serial, doc.kind, doc.createdAt)) continue;
      let score = 0;
      let all = true;
      for (let i = 0; i < words.length; i++) {
        const tf = doc.terms.get(words[i]!.token);
        if (tf === undefined) {
          all = false;
          break;
        }
        score += termScore(idfs[i]!, tf, doc.length, avg);
      }
      if (!all) continue;
      c.serial.push(serial);
      c.time.push(doc.createdAt);
      c.length.push(doc.length);
      c.score.push(score);
    }
  return c;
}

/** The reader may see the event and it passes the filter's other conditions. */
function admits(p: Prepared, json: string, o: QueryOptions): boolean {
  if (o.allow && !o.allow(json)) return false;
  if (!p.needsEvent) return true;
  const e = JSON.parse(json) as NostrEvent;
  if (!matchFilter(p.rest, e)) return false;
  const langs = p.q.languages;
  return langs.length === 0 || eventLanguages(e).some((l) => langs.includes(l));
}

/**
 * Candidate positions in rank order: score, then newer, then higher serial (the final order
 * breaks ties by id). When only the best `need` can be results, the rest are not sorted: every
 * candidate scoring at least the need-th best score is kept, ties included.
 */
function rankOrder(c: Candidates, need: number): number[] {
  const n = c.serial.length;
  let keep = Array.from(c.serial.keys());
  if (n > need * 2 + 64) {
    const sorted = Float64Array.from(c.score).sort();
    const kth = sorted[n - need]!;
    keep = keep.filter((k) => c.score[k]! >= kth);
  }
  return keep.sort(
    (a, b) => c.score[b]! - c.score[a]! || c.time[b]! - c.time[a]! || c.serial[b]! - c.serial[a]!,
  );
}

/** The best `limit` results of a search filter, best first; undefined if cancelled. */
async function searchFilter(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  limit: number,
  o: QueryOptions,
): Promise<SearchHit[] | undefined> {
  const p = prepare(f);
  if (!p || limit === 0) return [];
  const c = await candidates(ix, f, p, o);
  if (!c) return undefined;
  // A little slack: an event removed since the snapshot is skipped when loaded.
  const order = rankOrder(c, p.needsEvent || o.allow ? c.serial.length : limit * 2 + 16);
  const hits: (SearchHit & { score: number })[] = [];
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
  return hits.slice(0, limit).map(({ time, serial, json }) => ({ time, serial, json }));
}

/** Adds the serial of every event matching a search filter to `seen`; false if cancelled. */
async function searchCount(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  seen: Set<number>,
  o: QueryOptions,
): Promise<boolean> {
  const p = prepare(f);
  if (!p) return true;
  const c = await candidates(ix, f, p, o);
  if (!c) return false;
  let sinceYield = 0;
  for (const serial of c.serial) {
    if (seen.has(serial)) continue;
    if (p.needsEvent || o.allow) {
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

/** The search engine over one index, as the store's queries use it. */
export function searcher(ix: SearchIndex): Searcher {
  return {
    filter: (s, f, limit, o) => searchFilter(ix, s, f, limit, o),
    count: (s, f, seen, o) => searchCount(ix, s, f, seen, o),
  };
}
