// A search's walk over the postings, run on another thread. The walks (high-walk.ts,
// intersect.ts) read only LMDB and a few numbers the search's snapshot fixed (its words and
// their frequencies, the corpus average, the watermark, the removed documents), so the
// consumers' thread, which holds the same index in its own handles, can run one while the main
// thread answers frames; what it sends back is the scored candidates. The documents after the
// watermark (the consumer's views, in the main thread's memory) are added when they return,
// and the events are loaded there as before (engine.ts). A walk is sent only while that thread
// applies no batch, so it never waits behind one, and to whichever thread has fewer walks in
// hand, so the two share them; one that fails runs here instead.
import type { QueryOptions } from "../indexes/query.ts";
import { tokenPrefix } from "./blocks.ts";
import type { Candidates } from "./candidates.ts";
import type { SearchIndex, SearchSnapshot } from "./consumer.ts";
import { highCandidates } from "./high-walk.ts";
import type { ImpactState } from "./impact.ts";
import { allCandidates } from "./intersect.ts";
import type { Setup } from "./plan.ts";

/** The numbers of a search's Setup that cross as they are (picked: a Setup also holds functions and the views, which stay). */
type Plain = Pick<Setup, "idfs" | "avg" | "stored" | "hwm" | "since" | "until" | "excluded">;

const plain = ({ idfs, avg, stored, hwm, since, until, excluded }: Plain): Plain => ({
  idfs,
  avg,
  stored,
  hwm,
  since,
  until,
  excluded,
});

/** What a walk needs of a search's snapshot, as it crosses to the other thread. */
export interface WalkRequest extends Plain {
  /** the high lists' threshold walk (with `limit`), else every match */
  high: boolean;
  limit: number;
  /** every match: only those that can be among the best `keep` (Candidates.keepBest; 0: all) */
  keep: number;
  tokens: string[];
  dfs: number[];
  kinds: number[] | null;
  impact: ImpactState;
  highFrom: number;
}

/** The candidates a walk found (the first `n` of each array), and the high walk's result. */
export interface WalkReply {
  n: number;
  serial: Float64Array;
  time: Float64Array;
  score: Float64Array;
  /** the high walk's bound (null: the lists could not decide) */
  bound: number | null;
  error?: string;
}

/** Runs walks elsewhere. */
export interface WalkOffload {
  /** walks may be sent now (the thread is up and applies no batch) */
  ready(): boolean;
  /** walks sent and not answered yet */
  inFlight(): number;
  walk(r: WalkRequest): Promise<WalkReply>;
}

/**
 * The request for a walk of `u`, or undefined when it cannot be sent: events hidden from the
 * reader (expired, awaiting their purge) are decided by a function of this thread.
 */
export function walkRequest(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  high: boolean,
  limit: number,
  keep: number,
): WalkRequest | undefined {
  if (u.hidden && (o.anyHidden?.() ?? true)) return undefined;
  return {
    ...plain(u),
    high,
    limit,
    keep,
    tokens: u.words.map((w) => w.token),
    dfs: u.words.map((w) => w.df),
    kinds: u.kinds ? [...u.kinds] : null,
    impact: u.snap.impact,
    highFrom: ix.highFrom,
  };
}

/** The walk itself, on the thread that holds `ix` (the consumers' thread). */
export async function runWalk(ix: SearchIndex, r: WalkRequest, c: Candidates): Promise<number | null> {
  // The search's snapshot as far as a walk reads it: the lists' state, and no views (they stay
  // with the main thread; the walks skip removed documents by `excluded`, the views by `gone`).
  const snap: SearchSnapshot = {
    w: undefined,
    views: [],
    docs: 0,
    totalLength: 0,
    impact: r.impact,
    gone: new Set(),
    goneSorted: r.excluded,
  };
  const u: Setup = {
    ...plain(r),
    snap,
    words: r.tokens.map((token, i) => ({ token, prefix: tokenPrefix(token), df: r.dfs[i]! })),
    kinds: r.kinds ? new Set(r.kinds) : undefined,
    hidden: undefined,
    // only the views' documents are checked with it, and a walk here has none
    visible: () => false,
  };
  // never cancelled here: a search whose client went away ignores the answer
  const o: QueryOptions = { hwm: r.hwm, defaultLimit: r.limit, maxLimit: r.limit, yieldEvery: 64 };
  if (!r.high) {
    c.keepBest(r.keep);
    await allCandidates(ix, u, o, c);
    return null;
  }
  // the main thread's setting (tests change it); this thread's index only applies otherwise
  ix.highFrom = r.highFrom;
  const bound = await highCandidates(ix, u, o, c, r.limit);
  return bound === undefined || bound === false ? null : bound;
}

/** Candidates as they cross back: copies of the first `n` of each array (transferable). */
export function walkReply(c: Candidates, bound: number | null): WalkReply {
  return {
    n: c.n,
    serial: c.serial.slice(0, c.n),
    time: c.time.slice(0, c.n),
    score: c.score.slice(0, c.n),
    bound,
  };
}

/** Adds a reply's candidates to `c`. */
export function addReply(c: Candidates, r: WalkReply): void {
  for (let k = 0; k < r.n; k++) c.push(r.serial[k]!, r.time[k]!, r.score[k]!);
}
