// The search index as a consumer of the event log. A batch groups its events' postings by
// token and appends them to each token's last block (blocks.ts): one read and one write per
// distinct token, where one key per posting cost a random page per word per event. A removed
// event (replaced, deleted, expired, vanished) is counted out of its tokens' frequencies at once
// and listed as gone; its postings are purged later, together with those of thousands of other
// removed events, so a block is rewritten once per purge rather than once per removal (Lucene
// keeps deletions the same way until a merge). The corpus totals BM25 needs are updated once
// per batch. The view of a batch not yet applied holds its documents, so a search finds an
// event the moment it is committed (engine.ts).

import type { NostrEvent } from "../nostr/event.ts";
import type { Batch, Consumer, Prepared, Tail, Watermark } from "../store/consumer.ts";
import { noTail, readSnapshot } from "../store/consumer.ts";
import { readU64, serialKey } from "../store/keys.ts";
import { openDb } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import type { BlockHeader, FlatPostings } from "./blocks.ts";
import {
  BLOCK_BYTES,
  blockKey,
  encodeBlocks,
  flatten,
  keyFirstSerial,
  MAX_LENGTH,
  MAX_TF,
  NARROW,
  POSTING_FIELDS,
  readHeader,
  readStats,
  STATS_KEY,
  statsValue,
  tokenBounds,
  tokenPrefix,
  WIDE,
  withDf,
} from "./blocks.ts";
import { eventTokens } from "./fields.ts";
import type { ImpactState } from "./impact.ts";
import { IMPACT_KEY, impactValue, isHigh, needsRebuild, readImpact, THRESHOLD } from "./impact.ts";
import { type BlockView, VIEW_ENCODER } from "./postings.ts";
import { purgeByToken, SweepPurge } from "./purge.ts";
import { TOKENIZER_VERSION } from "./tokenize.ts";

/** An event's searchable text: its distinct tokens with their frequencies, and its length. */
export interface Doc {
  terms: Map<string, number>;
  length: number;
  kind: number;
  createdAt: number;
}

export function analyze(e: NostrEvent): Doc | null {
  const tokens = eventTokens(e);
  if (tokens.length === 0) return null;
  const terms = new Map<string, number>();
  // tf is capped where the blocks cap it, so the index and the views score a document alike.
  for (const t of tokens) terms.set(t, Math.min((terms.get(t) ?? 0) + 1, MAX_TF));
  return { terms, length: Math.min(tokens.length, MAX_LENGTH), kind: e.kind, createdAt: e.created_at };
}

/** Documents committed and not yet applied (`docs`), and applied ones since removed. */
export interface SearchView {
  docs: Map<number, Doc>;
  removed: Map<number, Doc>;
  /** per token: documents added minus documents removed */
  df: Map<string, number>;
  docCount: number;
  totalLength: number;
}

/** The corpus as one reader sees it: entries up to `w`, plus the views after it. */
export interface SearchSnapshot {
  w: Watermark | undefined;
  views: SearchView[];
  docs: number;
  totalLength: number;
  /** what the high-impact lists were built with (impact.ts); ref 0 when there are none */
  impact: ImpactState;
  /** removed documents whose postings are still in the blocks of this snapshot */
  gone: Set<number>;
  /** the same, ascending (walked beside postings, which come in serial order) */
  goneSorted: Float64Array;
}

// 4: the high-impact lists (search_high) beside the blocks
// 5: posting blocks in narrow columns (blocks.ts format 4). Rebuilt on upgrade, so that a
//    store's blocks are all narrow at once, and so that a relay from before, which reads only
//    format 3, rebuilds after a downgrade instead of misreading them.
const BLOCK_FORMAT_VERSION = 5;
/** Removed documents whose postings are purged together once this many wait. */
export const PURGE_AT = 4096;
/**
 * ... or once there are as many of them as live documents (at least PURGE_MIN): a small index
 * that loses many documents (retention, the disk budget) gives their pages back instead of
 * carrying more dead postings than live ones until 4,096 wait. At an eighth of the live ones,
 * the replaced profiles and contact lists of an ordinary ingest set purges off every few
 * hundred documents while the index was small: 4 µs more CPU an event on the 50k ingest (the
 * consumers' thread 50 against 46) and a larger derived file.
 */
const PURGE_SHARE = 1;
const PURGE_MIN = 64;
/**
 * A purge sweeps every block instead of looking up each removed document's tokens once the
 * lookups would pass an eighth of the blocks: a lookup (a reverse range read of one entry) costs
 * about what reading eight blocks in order does.
 */
const SWEEP_WHEN = 8;
/**
 * A removed document keeps its words in search_gone for a purge by token only if it has at most
 * this many; a longer one is purged by a sweep. Its words cost what its text does: a flood of 4
 * KB notes evicted for the disk budget put 14 MiB of them in derived/ at once, and a purge by
 * token of such notes is a sweep's work anyway (a lookup per word).
 */
const GONE_WORDS = 64;
/**
 * Blocks read per batch by a sweep: 8 MiB, a few tens of ms. A slice rewrites at most that
 * much, so a batch's transaction takes no more fresh pages for the purge than this.
 */
const SWEEP_SLICE_BYTES = 8 * 2 ** 20;
/**
 * ... or a sixteenth of the blocks, so that a sweep of a large index ends within 16 batches:
 * documents removed meanwhile wait for the next one, and at 8 MiB a batch a sweep of 500 MiB
 * of blocks took 60 batches, long enough under a disk budget's evictions for a third of the
 * index to be dead postings. A sixteenth of the index is still a small share of the budget's
 * slack to rewrite in one transaction.
 */
const SWEEP_SLICES = 16;
const SEP = "\u0000";

export class SearchIndex implements Consumer<Doc, SearchView> {
  readonly name = "search";
  /** the tokenizer and the block format: either changing rebuilds the index */
  readonly version = TOKENIZER_VERSION * 1000 + BLOCK_FORMAT_VERSION;
  readonly blocks: BinDb;
  /** the same database for searches, read without a copy per block (postings.ts) */
  readonly blocksView: BlockView;
  /** each token's high-impact postings (impact.ts), in blocks of the same format */
  readonly high: BinDb;
  readonly highView: BlockView;
  readonly gone: BinDb;
  readonly meta: BinDb;
  /** serials in `gone`: removed documents whose postings are still in the blocks (the applier's) */
  readonly goneSerials = new Set<number>();
  /** the same as readers see it: read from disk with the watermark it goes with */
  private readGone = new Set<number>();
  private readGoneSorted = new Float64Array(0);
  private readGoneAt = "";
  /** set by the runner that feeds this consumer */
  tail: Tail<SearchView> = noTail;

  /** purge once this many removed documents wait (tests set it low) */
  purgeAt = PURGE_AT;
  /** a purge by sweep under way (purge.ts), a slice per batch */
  private sweep: SweepPurge | undefined;
  /** a purge sweeps once its lookups times this pass the blocks (tests: 0 never, Infinity always) */
  sweepWhen = SWEEP_WHEN;
  /** bytes of blocks a sweep reads per batch, and blocks per range read (tests lower them) */
  sweepSliceBytes = SWEEP_SLICE_BYTES;
  sweepChunk: number | undefined;
  /** the rarest word's documents from which a search tries the high lists first (tests lower it) */
  highFrom = 50_000;
  /**
   * The rarest word's documents from which a search's walk may run on the consumers' thread
   * (engine.ts; tests lower it). Shorter walks are not worth the crossing: a round trip of a
   * walk's request and reply between two threads takes 75-100 µs, what walking ~5,000
   * documents against a common word does. Since walks send back only the candidates that can
   * rank (Candidates.keepBest: ~300 for a limit of 20, where it was every match), sending the
   * 50k store's walks (rarest word in ~15,000 documents) raised the search phase from
   * ~1,600 to ~2,100 searches/s; before, their replies of ~9,000 candidates made it slower.
   */
  offloadFrom = 5_000;
  /** bytes a block is closed at (tests lower it to get many blocks from little data) */
  blockBytes = BLOCK_BYTES;

  constructor(private readonly s: Store) {
    this.blocks = openDb(s, "search_blocks");
    this.blocksView = viewOf(s, "search_blocks");
    this.high = openDb(s, "search_high");
    this.highView = viewOf(s, "search_high");
    this.gone = openDb(s, "search_gone");
    this.meta = openDb(s, "search_meta");
    for (const k of this.gone.getKeys({})) this.goneSerials.add(readU64(k as Buffer, 0));
  }

  prepare(e: NostrEvent): Doc | null {
    return analyze(e);
  }

  newView(): SearchView {
    return { docs: new Map(), removed: new Map(), df: new Map(), docCount: 0, totalLength: 0 };
  }

  view(v: SearchView, d: Prepared<Doc>, sign: 1 | -1, removal: boolean): void {
    const into = removal ? v.removed : v.docs;
    if (sign > 0) into.set(d.serial, d.p);
    else into.delete(d.serial);
    const effect = removal ? -sign : sign;
    for (const t of d.p.terms.keys()) v.df.set(t, (v.df.get(t) ?? 0) + effect);
    v.docCount += effect;
    v.totalLength += effect * d.p.length;
  }

  /**
   * Each event's postings go to its tokens' lists as it is added (its analysis is not kept), and
   * the lists are appended to the tokens' blocks at the end: one read and one write per token.
   */
  batch(_s: Store): Batch {
    const added = new Map<string, FlatPostings>();
    const highAdded = new Map<string, FlatPostings>();
    const removed = new Map<string, number>();
    const impact = this.impact();
    let docs = 0;
    let length = 0;
    return {
      add: (e, serial, sign) => {
        const p = analyze(e);
        if (p === null) return;
        if (sign > 0) {
          for (const [t, tf] of p.terms) {
            pushTo(added, t, serial, tf, p);
            if (impact.ref > 0 && isHigh(tf, p.length, impact.ref, impact.threshold))
              pushTo(highAdded, t, serial, tf, p);
          }
          docs++;
          length += p.length;
          return;
        }
        // A removed document's postings stay until a purge; readers skip the serials listed gone.
        for (const t of p.terms.keys()) removed.set(t, (removed.get(t) ?? 0) + 1);
        // Its words, for a purge by token; a long document's (an empty record) only by sweep.
        const words = p.terms.size <= GONE_WORDS ? [...p.terms.keys()].join(SEP) : "";
        this.gone.put(serialKey(serial), Buffer.from(words, "utf8"));
        this.goneSerials.add(serial);
        docs--;
        length -= p.length;
      },
      write: () => this.write(added, highAdded, removed, docs, length, impact),
    };
  }

  private write(
    added: Map<string, FlatPostings>,
    highAdded: Map<string, FlatPostings>,
    removed: Map<string, number>,
    docs: number,
    length: number,
    impact: ImpactState,
  ): void {
    for (const t of new Set([...added.keys(), ...removed.keys()]))
      this.updateToken(this.blocks, tokenPrefix(t), added.get(t) ?? NONE, removed.get(t) ?? 0);
    // A high list's df counts what was appended (nothing reads it); its removed documents go
    // with the purges.
    for (const [t, list] of highAdded) this.updateToken(this.high, tokenPrefix(t), list, 0);
    const cur = readStats(this.meta.get(STATS_KEY));
    const live = cur.docs + docs;
    const total = cur.totalLength + length;
    if (docs !== 0 || length !== 0) this.meta.put(STATS_KEY, statsValue(live, total));
    if (needsRebuild(impact, live, total / (live || 1))) this.rebuildHigh(total / live, live);
    if (this.sweep) this.sweepOn();
    else {
      const waiting = this.goneSerials.size;
      if (waiting >= this.purgeAt || (waiting >= PURGE_MIN && waiting >= live * PURGE_SHARE))
        this.purge(this.purgeAt * 2);
    }
  }

  /**
   * The high lists again, from every token's postings, at `ref` (impact.ts). In the batch's
   * transaction, so a reader sees the lists and the reference they were built with together.
   * Postings of removed documents waiting for a purge are copied too: readers skip them, and
   * the purge takes them out of both.
   */
  private rebuildHigh(ref: number, docs: number): void {
    for (const k of Array.from(this.high.getKeys({}), (k) => Buffer.from(k as Buffer))) this.high.remove(k);
    let prefix: Buffer | undefined;
    let list: FlatPostings = [];
    const flush = () => {
      if (prefix && list.length > 0)
        for (const blk of encodeBlocks(list, list.length / POSTING_FIELDS, undefined, this.blockBytes, WIDE))
          this.high.put(blockKey(prefix, blk.firstSerial), blk.bytes);
      list = [];
    };
    const all: FlatPostings = [];
    for (const { key, value } of this.blocks.getRange({})) {
      const k = key as Buffer;
      const p = k.subarray(0, k.length - 8);
      if (!prefix || !p.equals(prefix)) {
        flush();
        prefix = Buffer.from(p);
      }
      all.length = 0;
      flatten(value as Buffer, all);
      for (let i = 0; i < all.length; i += POSTING_FIELDS)
        if (isHigh(all[i + 1]!, all[i + 2]!, ref))
          for (let f = 0; f < POSTING_FIELDS; f++) list.push(all[i + f]!);
    }
    flush();
    this.meta.put(IMPACT_KEY, impactValue({ ref, docs, threshold: THRESHOLD }));
  }

  /** Appends a token's new postings and counts its removed documents out of its frequency. */
  private updateToken(b: BinDb, prefix: Buffer, add: FlatPostings, removed: number): void {
    const { start, end } = tokenBounds(prefix);
    let last: { firstSerial: number; bytes: Uint8Array; header: BlockHeader } | undefined;
    for (const { key, value } of b.getRange({ start: end, end: start, reverse: true, limit: 1 })) {
      const bytes = Buffer.from(value as Buffer);
      last = { firstSerial: keyFirstSerial(key as Buffer), bytes, header: readHeader(bytes) };
    }
    const df = (last?.header.df ?? 0) - removed + add.length / POSTING_FIELDS;
    if (df <= 0) {
      // No live document holds the token: its blocks go, gone postings and all.
      const keys = Array.from(b.getKeys({ start, end }), (k) => Buffer.from(k as Buffer));
      for (const k of keys) b.remove(k);
      return;
    }
    if (add.length === 0) {
      if (last) b.put(blockKey(prefix, last.firstSerial), withDf(last.bytes, df));
      return;
    }
    // The high lists stay wide: a search merges them in place, every block of them it reads.
    const format = b === this.high ? WIDE : NARROW;
    for (const blk of encodeBlocks(add, df, last, this.blockBytes, format))
      b.put(blockKey(prefix, blk.firstSerial), blk.bytes);
  }

  /**
   * Purges up to `max` removed documents (purge.ts): by token when their tokens are few beside
   * the index's blocks, else by a sweep of every block, a slice per batch.
   */
  private purge(max: number): void {
    const byToken = new Map<string, Set<number>>();
    const serials: number[] = [];
    let lookups = 0;
    let long = false;
    for (const { key, value } of this.gone.getRange({ limit: max })) {
      const serial = readU64(key as Buffer, 0);
      serials.push(serial);
      if ((value as Buffer).length === 0) {
        long = true;
        continue;
      }
      for (const t of (value as Buffer).toString("utf8").split(SEP)) {
        lookups++;
        let set = byToken.get(t);
        if (!set) {
          set = new Set();
          byToken.set(t, set);
        }
        set.add(serial);
      }
    }
    const st = this.blocks.getStats() as {
      entryCount: number;
      treeLeafPageCount: number;
      overflowPages: number;
      pageSize: number;
    };
    if (long || lookups * this.sweepWhen > st.entryCount) {
      // A sweep of a large index goes in at most SWEEP_SLICES batches.
      const slice = Math.max(
        this.sweepSliceBytes,
        ((st.treeLeafPageCount + st.overflowPages) * st.pageSize) / SWEEP_SLICES,
      );
      this.sweep = new SweepPurge(serials, [this.blocks, this.high], slice, this.sweepChunk);
      this.sweepOn();
      return;
    }
    purgeByToken([this.blocks, this.high], byToken);
    this.forget(serials);
  }

  /** The sweep's next slice; once it is done, its documents leave the gone list. */
  private sweepOn(): void {
    const sw = this.sweep!;
    if (!sw.step()) return;
    this.sweep = undefined;
    this.forget(sw.serials);
  }

  private forget(serials: Iterable<number>): void {
    for (const serial of serials) {
      this.gone.remove(serialKey(serial));
      this.goneSerials.delete(serial);
    }
  }

  /** A purge by sweep is under way (tests). */
  get sweeping(): boolean {
    return this.sweep !== undefined;
  }

  clear(_s: Store): void {
    this.blocks.clearSync();
    this.high.clearSync();
    this.gone.clearSync();
    this.goneSerials.clear();
    this.sweep = undefined;
    this.meta.clearSync();
    // The postings of the first format, one key per posting, with their frequencies.
    for (const name of ["search", "search_df"]) openDb(this.s, name).clearSync();
  }

  /** The corpus as a reader sees it now: read once, synchronously, before walking postings. */
  snapshot(): SearchSnapshot {
    const { w, views } = readSnapshot(this.s, this);
    let { docs, totalLength } = readStats(this.meta.get(STATS_KEY));
    for (const v of views) {
      docs += v.docCount;
      totalLength += v.totalLength;
    }
    // The applier (maybe on another thread) changes the gone list with the watermark; readers
    // take the list on disk that goes with the watermark they read.
    const at = w ? `${w.gen}/${w.serial}/${w.removal}` : "";
    if (at !== this.readGoneAt) {
      const sorted: number[] = [];
      for (const k of this.gone.getKeys({})) sorted.push(readU64(k as Buffer, 0));
      this.readGone = new Set(sorted);
      this.readGoneSorted = Float64Array.from(sorted);
      this.readGoneAt = at;
    }
    const impact = this.impact();
    return { w, views, docs, totalLength, impact, gone: this.readGone, goneSorted: this.readGoneSorted };
  }

  /** What the high lists on disk were built with, now. */
  impact(): ImpactState {
    return readImpact(this.meta.get(IMPACT_KEY));
  }

  /** Documents containing the token, on disk (as of this moment's read snapshot). */
  storedDf(prefix: Uint8Array): number {
    const { start, end } = tokenBounds(prefix);
    for (const { value } of this.blocks.getRange({ start: end, end: start, reverse: true, limit: 1 }))
      return readHeader(value as Buffer).df;
    return 0;
  }

  /** Documents containing the token in the snapshot. */
  docFrequency(snap: SearchSnapshot, token: string): number {
    let df = this.storedDf(tokenPrefix(token));
    for (const v of snap.views) df += v.df.get(token) ?? 0;
    return df;
  }
}

const NONE: FlatPostings = [];

/** The blocks database read without a copy per value (postings.ts). */
const viewOf = (s: Store, name: string): BlockView =>
  // `encoder` (with its decode) is an lmdb-js option its types do not declare.
  s.derived.openDB({ name, keyEncoding: "binary", encoder: VIEW_ENCODER } as never) as unknown as BlockView;

function pushTo(m: Map<string, FlatPostings>, t: string, serial: number, tf: number, p: Doc): void {
  let list = m.get(t);
  if (!list) {
    list = [];
    m.set(t, list);
  }
  list.push(serial, tf, p.length, p.kind, p.createdAt);
}
