// The search index as a store Indexer: postings, document frequencies and the corpus totals BM25
// needs, all written inside the transaction that stores or removes the event. So a replaced,
// deleted or expired event leaves the index in the same transaction it leaves the store.
//
// Both calls are idempotent: a document whose first posting already exists is not added again,
// one whose first posting is absent is not removed, so counts never drift when an event is seen
// twice (a rebuild overlapping live writes, or an index created after the events).
import type { NostrEvent } from "../nostr/event.ts";
import type { BinDb, Indexer, Store } from "../store/store.ts";
import { openDb, putIndex } from "../store/store.ts";
import { eventTokens } from "./fields.ts";
import {
  postingKey,
  postingValue,
  readStats,
  readU32,
  STATS_KEY,
  statsValue,
  tokenPrefix,
  u32,
  VERSION_KEY,
} from "./keys.ts";
import { TOKENIZER_VERSION } from "./tokenize.ts";

/** An event's searchable text as distinct tokens with their frequencies, and its length. */
export interface Doc {
  terms: Map<string, number>;
  length: number;
}

export function analyze(e: NostrEvent): Doc | undefined {
  const tokens = eventTokens(e);
  if (tokens.length === 0) return undefined;
  const terms = new Map<string, number>();
  for (const t of tokens) terms.set(t, (terms.get(t) ?? 0) + 1);
  return { terms, length: tokens.length };
}

interface Prepared {
  doc: Doc;
  prefixes: Buffer[];
}

function prepareDoc(e: NostrEvent): Prepared | null {
  const doc = analyze(e);
  return doc ? { doc, prefixes: [...doc.terms.keys()].map(tokenPrefix) } : null;
}

export class SearchIndex implements Indexer {
  readonly name = "search";
  readonly postings: BinDb;
  readonly df: BinDb;
  readonly meta: BinDb;

  constructor(s: Store) {
    this.postings = openDb(s, "search");
    this.df = openDb(s, "search_df");
    this.meta = openDb(s, "search_meta");
  }

  // Document frequencies and corpus totals change by small deltas per event; they are summed
  // over the transaction and written once in flush(), instead of a read and a write per token
  // per event (which made indexing several times slower than storing).
  private dfDelta = new Map<string, number>();
  private docsDelta = 0;
  private lengthDelta = 0;

  // Tokenising is the costly part of indexing and needs no transaction: the writer has it done
  // when an event is submitted, so the transaction (which serialises all writes) only stores.
  private readonly prepared = new WeakMap<NostrEvent, Prepared | null>();

  prepare(e: NostrEvent): void {
    this.prepared.set(e, prepareDoc(e));
  }

  put(s: Store, e: NostrEvent, serial: number): void {
    const ready = this.prepared.get(e);
    const prep = ready === undefined ? prepareDoc(e) : ready;
    if (!prep) return;
    const { doc, prefixes } = prep;
    if (this.postings.get(postingKey(prefixes[0]!, e.created_at, serial)) !== undefined) return;
    let i = 0;
    for (const tf of doc.terms.values()) {
      const p = prefixes[i++]!;
      // Postings may be deferred to the write thread; the counts below are not (see putIndex).
      putIndex(s, this.postings, postingKey(p, e.created_at, serial), postingValue(tf, doc.length, e.kind));
      const k = p.toString("latin1");
      this.dfDelta.set(k, (this.dfDelta.get(k) ?? 0) + 1);
    }
    this.docsDelta++;
    this.lengthDelta += doc.length;
  }

  restore(_s: Store, e: NostrEvent, serial: number): void {
    const prep = prepareDoc(e);
    if (!prep) return;
    let i = 0;
    for (const tf of prep.doc.terms.values())
      this.postings.put(
        postingKey(prep.prefixes[i++]!, e.created_at, serial),
        postingValue(tf, prep.doc.length, e.kind),
      );
  }

  remove(_s: Store, e: NostrEvent, serial: number): void {
    const doc = analyze(e);
    if (!doc) return;
    const prefixes = [...doc.terms.keys()].map(tokenPrefix);
    if (this.postings.get(postingKey(prefixes[0]!, e.created_at, serial)) === undefined) return;
    for (const p of prefixes) {
      this.postings.remove(postingKey(p, e.created_at, serial));
      const k = p.toString("latin1");
      this.dfDelta.set(k, (this.dfDelta.get(k) ?? 0) - 1);
    }
    this.docsDelta--;
    this.lengthDelta -= doc.length;
  }

  flush(_s?: Store): void {
    for (const [k, delta] of this.dfDelta) {
      if (delta === 0) continue;
      const p = Buffer.from(k, "latin1");
      const n = this.docFrequencyOf(p) + delta;
      if (n <= 0) this.df.remove(p);
      else this.df.put(p, u32(n));
    }
    this.dfDelta.clear();
    if (this.docsDelta !== 0 || this.lengthDelta !== 0) this.bumpStats(this.docsDelta, this.lengthDelta);
    this.docsDelta = 0;
    this.lengthDelta = 0;
  }

  /** Documents containing the token (its prefix from tokenPrefix). */
  docFrequencyOf(prefix: Buffer): number {
    const v = this.df.get(prefix);
    return v ? readU32(v) : 0;
  }

  stats(): { docs: number; totalLength: number } {
    return readStats(this.meta.get(STATS_KEY));
  }

  private bumpStats(docs: number, length: number): void {
    const cur = this.stats();
    this.meta.put(STATS_KEY, statsValue(Math.max(0, cur.docs + docs), Math.max(0, cur.totalLength + length)));
  }

  /** True when the postings were built by the current tokenizer (else they need a rebuild). */
  isCurrent(): boolean {
    const v = this.meta.get(VERSION_KEY);
    return v !== undefined && readU32(v) === TOKENIZER_VERSION;
  }

  markCurrent(): void {
    this.meta.putSync(VERSION_KEY, u32(TOKENIZER_VERSION));
  }

  /** Forgets the version, so the next start with search enabled rebuilds the index. */
  markStale(): void {
    if (this.meta.get(VERSION_KEY) !== undefined) this.meta.removeSync(VERSION_KEY);
  }
}

/** The store's search index, if search is enabled. */
export const searchIndexOf = (s: Store): SearchIndex | undefined =>
  s.indexers.find((ix): ix is SearchIndex => ix instanceof SearchIndex);
