// Answers filters that carry `search`. Every query word must occur in a result (AND). The
// rarest word's postings are walked between since and until; each candidate is looked up in the
// other words' postings by its exact key (created_at | serial are known), so the cost follows
// the rarest word. Kinds are checked on the posting value; ids, authors, tags and `language:`
// need the event, which is loaded only for candidates in rank order until the limit is filled.
// Ranking: BM25 descending, then created_at descending, then id ascending; `limit` is applied
// after ranking (NIP-50), keeping the whole tie group at the cut so the cut is deterministic.
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { keySerial, keyTime } from "../store/keys.ts";
import type { QueryOptions } from "../store/query.ts";
import type { Store } from "../store/store.ts";
import { readEvent } from "../store/store.ts";
import { idf, K1, termScore } from "./bm25.ts";
import { eventLanguages } from "./fields.ts";
import type { SearchIndex } from "./indexer.ts";
import { searchIndexOf } from "./indexer.ts";
import { postingKind, postingLength, postingRange, postingTf, tokenPrefix } from "./keys.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";

export interface SearchHit {
  time: number;
  serial: number;
  json: string;
}

interface Candidate {
  serial: number;
  time: number;
  score: number;
}

interface Prepared {
  ix: SearchIndex;
  q: SearchQuery;
  /** the filter without `search`, checked on loaded events */
  rest: Filter;
  kinds: Set<number> | undefined;
  needsEvent: boolean;
}

const ZERO = Buffer.from([0]);
const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

function prepare(s: Store, f: Filter): Prepared | undefined {
  const ix = searchIndexOf(s);
  if (!ix || f.search === undefined) return undefined;
  const q = parseSearch(f.search);
  if (q.words.length === 0) return undefined;
  const { search: _, ...rest } = f;
  const needsEvent =
    f.ids !== undefined || f.authors !== undefined || f.tags !== undefined || q.languages.length > 0;
  return { ix, q, rest, kinds: f.kinds && new Set(f.kinds), needsEvent };
}

/** Writes `created_at | serial` into the last 16 bytes of a posting key buffer. */
function setTail(k: Buffer, time: number, serial: number): void {
  const at = k.length - 16;
  k.writeUInt32BE(Math.floor(time / 0x1_0000_0000), at);
  k.writeUInt32BE(time >>> 0, at + 4);
  k.writeUInt32BE(Math.floor(serial / 0x1_0000_0000), at + 8);
  k.writeUInt32BE(serial >>> 0, at + 12);
}

/** The k-th best score among candidates (k ≥ 1, at least k of them). */
function kthScore(c: Candidate[], k: number): number {
  const scores = Float64Array.from(c, (x) => x.score).sort();
  return scores[scores.length - k]!;
}

/**
 * Every indexed event containing all words, scored; undefined if cancelled. With `keep` (only
 * when every candidate is a result: no event checks), candidates that cannot reach the `keep`
 * best scores are dropped and their remaining lookups skipped (MaxScore): a word adds at most
 * idf·(k1+1), so a partial score below the k-th best minus what the other words could add is out.
 * Ties with the k-th best score are kept.
 */
async function candidates(
  f: Filter,
  p: Prepared,
  o: QueryOptions,
  keep?: number,
): Promise<Candidate[] | undefined> {
  const since = f.since ?? 0;
  const until = f.until ?? Number.MAX_SAFE_INTEGER;
  if (since > until || p.kinds?.size === 0) return [];
  const { ix } = p;
  const words = p.q.words.map((token) => {
    const prefix = tokenPrefix(token);
    return { token, prefix, df: ix.docFrequencyOf(prefix) };
  });
  if (words.some((w) => w.df === 0)) return [];
  words.sort((a, b) => a.df - b.df || (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const { docs, totalLength } = ix.stats();
  const avg = docs > 0 ? totalLength / docs : 1;
  const idfs = words.map((w) => idf(docs, w.df));
  // upTo[i]: the most words i.. can still add
  const upTo = idfs.map((_, i) => idfs.slice(i).reduce((sum, x) => sum + x * (K1 + 1), 0));
  upTo.push(0);
  const lookups = words.map((w) => Buffer.concat([w.prefix, Buffer.alloc(16)]));
  const chunk = Math.max(256, o.yieldEvery * 4);
  let out: Candidate[] = [];
  let threshold = Number.NEGATIVE_INFINITY;
  let { start, end } = postingRange(words[0]!.prefix, since, until);
  for (;;) {
    let n = 0;
    let last: Buffer | undefined;
    for (const { key, value } of ix.postings.getRange({ start, end, limit: chunk })) {
      n++;
      last = key as Buffer;
      const serial = keySerial(last);
      if (serial > o.hwm) continue;
      const v = value as Buffer;
      if (p.kinds && !p.kinds.has(postingKind(v))) continue;
      const time = keyTime(last);
      const length = postingLength(v);
      let score = termScore(idfs[0]!, postingTf(v), length, avg);
      let i = 1;
      for (; i < words.length; i++) {
        if (score + upTo[i]! < threshold) break;
        const k = lookups[i]!;
        setTail(k, time, serial);
        const w = ix.postings.getBinaryFast(k);
        if (w === undefined) break;
        score += termScore(idfs[i]!, postingTf(w), length, avg);
      }
      if (i < words.length || score < threshold || o.hidden?.(serial)) continue;
      out.push({ serial, time, score });
      if (keep && out.length >= 4 * keep + 256) {
        threshold = kthScore(out, keep);
        out = out.filter((c) => c.score >= threshold);
      }
    }
    if (n < chunk || !last) break;
    start = Buffer.concat([last, ZERO]);
    await yieldTurn();
    if (o.cancelled?.()) return undefined;
  }
  return out;
}

const byRank = (a: Candidate, b: Candidate): number =>
  b.score - a.score || b.time - a.time || b.serial - a.serial;

const load = readEvent;

/** The reader may see the event and it passes the filter's other conditions. */
function admits(p: Prepared, json: string, o: QueryOptions): boolean {
  if (o.allow && !o.allow(json)) return false;
  if (!p.needsEvent) return true;
  const e = JSON.parse(json) as NostrEvent;
  if (!matchFilter(p.rest, e)) return false;
  const langs = p.q.languages;
  return langs.length === 0 || eventLanguages(e).some((l) => langs.includes(l));
}

/** The best `limit` results of a search filter, best first; undefined if cancelled. */
export async function searchFilter(
  s: Store,
  f: Filter,
  limit: number,
  o: QueryOptions,
): Promise<SearchHit[] | undefined> {
  const p = prepare(s, f);
  if (!p || limit === 0) return [];
  const found = await candidates(f, p, o, p.needsEvent || o.allow ? undefined : limit);
  if (!found) return undefined;
  found.sort(byRank);
  const hits: (SearchHit & { score: number })[] = [];
  let cut: Candidate | undefined;
  let sinceYield = 0;
  for (const c of found) {
    if (cut && (c.score !== cut.score || c.time !== cut.time)) break;
    if (++sinceYield >= o.yieldEvery) {
      sinceYield = 0;
      await yieldTurn();
      if (o.cancelled?.()) return undefined;
    }
    const json = load(s, c.serial);
    if (json === undefined || !admits(p, json, o)) continue;
    hits.push({ time: c.time, serial: c.serial, json, score: c.score });
    if (hits.length === limit) cut = c;
  }
  const id = (h: SearchHit) => h.json.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64);
  hits.sort((a, b) => b.score - a.score || b.time - a.time || (id(a) < id(b) ? -1 : 1));
  return hits.slice(0, limit).map(({ time, serial, json }) => ({ time, serial, json }));
}

/** Adds the serial of every event matching a search filter to `seen`; false if cancelled. */
export async function searchCount(s: Store, f: Filter, seen: Set<number>, o: QueryOptions): Promise<boolean> {
  const p = prepare(s, f);
  if (!p) return true;
  const found = await candidates(f, p, o);
  if (!found) return false;
  let sinceYield = 0;
  for (const c of found) {
    if (seen.has(c.serial)) continue;
    if (p.needsEvent || o.allow) {
      if (++sinceYield >= o.yieldEvery) {
        sinceYield = 0;
        await yieldTurn();
        if (o.cancelled?.()) return false;
      }
      const json = load(s, c.serial);
      if (json === undefined || !admits(p, json, o)) continue;
    }
    seen.add(c.serial);
  }
  return true;
}
