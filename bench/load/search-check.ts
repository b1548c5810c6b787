// The search phase's oracle: the exact answer to each query, computed here from the dataset
// (what a relay keeps of it: every event, but only the newest version of a replaceable or
// addressable one) with the relay's own tokenizer and BM25 (src/search), ranked as NIP-50
// answers are here: score, then created_at descending, then id ascending, `limit` after
// ranking. It checks the index and the engine (postings, statistics, the not-yet-indexed
// tail), not the tokenizer, which has its own tests.

import type { NostrEvent } from "../../src/nostr/event.ts";
import { isAddressable, isReplaceable } from "../../src/nostr/kinds.ts";
import { MAX_TF } from "../../src/search/blocks.ts";
import { idf, termScore } from "../../src/search/bm25.ts";
import { eventTokens } from "../../src/search/fields.ts";
import { parseSearch } from "../../src/search/parse.ts";
import type { WireEvent } from "./wire.ts";

interface Doc {
  id: string;
  createdAt: number;
  length: number;
  tf: Map<string, number>;
}

/** The events a relay keeps of the dataset: replaceable and addressable ones by newest version. */
function kept(events: readonly WireEvent[]): WireEvent[] {
  const newest = new Map<string, WireEvent>();
  const out: WireEvent[] = [];
  for (const e of events) {
    if (!isReplaceable(e.kind) && !isAddressable(e.kind)) {
      out.push(e);
      continue;
    }
    const d = isAddressable(e.kind) ? (e.tags.find((t) => t[0] === "d")?.[1] ?? "") : "";
    const key = `${e.pubkey}:${e.kind}:${d}`;
    const cur = newest.get(key);
    if (!cur || e.created_at > cur.created_at || (e.created_at === cur.created_at && e.id < cur.id))
      newest.set(key, e);
  }
  return out.concat([...newest.values()]);
}

export class SearchOracle {
  private readonly docs: Doc[] = [];
  private readonly byToken = new Map<string, Doc[]>();
  private readonly totalLength: number;

  constructor(events: readonly WireEvent[]) {
    let total = 0;
    for (const e of kept(events)) {
      const tokens = eventTokens(e as NostrEvent);
      if (tokens.length === 0) continue;
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, Math.min((tf.get(t) ?? 0) + 1, MAX_TF));
      const doc = { id: e.id, createdAt: e.created_at, length: tokens.length, tf };
      this.docs.push(doc);
      total += tokens.length;
      for (const t of tf.keys()) {
        const list = this.byToken.get(t);
        if (list) list.push(doc);
        else this.byToken.set(t, [doc]);
      }
    }
    this.totalLength = total;
  }

  /** The ids a relay should answer `search` with, best first. */
  expected(search: string, limit: number): string[] {
    const words = parseSearch(search).words.map((token) => ({
      token,
      df: this.byToken.get(token)?.length ?? 0,
    }));
    if (words.length === 0 || words.some((w) => w.df === 0)) return [];
    // The engine's order of summing (rarest first, then by token), so scores are bit-identical.
    words.sort((a, b) => a.df - b.df || (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
    const n = this.docs.length;
    const avg = this.totalLength / n;
    const idfs = words.map((w) => idf(n, w.df));
    const hits: { id: string; createdAt: number; score: number }[] = [];
    for (const doc of this.byToken.get(words[0]!.token)!) {
      let score = 0;
      let all = true;
      for (let i = 0; i < words.length; i++) {
        const tf = doc.tf.get(words[i]!.token);
        if (tf === undefined) {
          all = false;
          break;
        }
        score += termScore(idfs[i]!, tf, doc.length, avg);
      }
      if (all) hits.push({ id: doc.id, createdAt: doc.createdAt, score });
    }
    hits.sort((a, b) => b.score - a.score || b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
    return hits.slice(0, limit).map((h) => h.id);
  }
}
