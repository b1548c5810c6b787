// The query planner: picks the most selective index for one filter and says which of the
// filter's conditions the index already guarantees (the rest are checked on each candidate).
// Order of preference: ids > authors+kinds > a tag > authors > kinds > time.
import type { Filter } from "../nostr/filter.ts";
import { hexBytes, kindBytes, pubkindPrefix, TIME_PREFIX, tagPrefix } from "../store/keys.ts";
import type { BinDb, Store } from "../store/types.ts";

export type Plan =
  | { type: "empty" }
  | { type: "ids"; ids: string[] }
  | {
      type: "scan";
      index: IndexName;
      db: BinDb;
      prefixes: Buffer[];
      /** some condition is not guaranteed by the index */
      needsCheck: boolean;
      /** what is left to check: only kinds/authors (read from the stored JSON without parsing), or more */
      residual: "none" | "fast" | "full";
      /** the pubkind index's ranges: `prefixes[a * kinds.length + k]` is (authors[a], kinds[k]) */
      pairs?: { authors: string[]; kinds: number[] };
    };

export type IndexName = "pubkind" | "tag" | "pubkey" | "kind" | "time";

/** Most (author, kind) pairs worth a cursor each before falling back to the author index. */
const MAX_PAIRS = 1024;

function isEmptyFilter(f: Filter): boolean {
  if (f.ids?.length === 0 || f.authors?.length === 0 || f.kinds?.length === 0) return true;
  if (f.tags?.some(([, v]) => v.length === 0)) return true;
  return f.since !== undefined && f.until !== undefined && f.since > f.until;
}

export function planFilter(s: Store, f: Filter): Plan {
  if (isEmptyFilter(f)) return { type: "empty" };
  if (f.ids) return { type: "ids", ids: [...new Set(f.ids)] };
  const authors = f.authors && [...new Set(f.authors)];
  const kinds = f.kinds && [...new Set(f.kinds)];
  const tagCount = f.tags?.length ?? 0;

  if (authors && kinds && authors.length * kinds.length <= MAX_PAIRS) {
    const prefixes: Buffer[] = [];
    for (const a of authors) {
      const pk = hexBytes(a);
      for (const k of kinds) prefixes.push(pubkindPrefix(pk, k));
    }
    return scan("pubkind", s.pubkind, prefixes, tagCount > 0 ? "full" : "none", { authors, kinds });
  }
  if (f.tags) {
    // The tag condition with the fewest values whose values all fit in the index.
    let best: { prefixes: Buffer[]; n: number } | undefined;
    for (const [letter, values] of f.tags) {
      const uniq = [...new Set(values)];
      const prefixes: Buffer[] = [];
      for (const v of uniq) {
        const p = tagPrefix(letter, v);
        if (!p) break;
        prefixes.push(p);
      }
      if (prefixes.length === uniq.length && (!best || uniq.length < best.n))
        best = { prefixes, n: uniq.length };
    }
    if (best) {
      const residual = tagCount > 1 ? "full" : authors !== undefined || kinds !== undefined ? "fast" : "none";
      return scan("tag", s.tag, best.prefixes, residual);
    }
  }
  if (authors)
    return scan("pubkey", s.pubkey, authors.map(hexBytes), tagCount > 0 ? "full" : kinds ? "fast" : "none");
  if (kinds) return scan("kind", s.kind, kinds.map(kindBytes), tagCount > 0 ? "full" : "none");
  return scan("time", s.time, [TIME_PREFIX], tagCount > 0 ? "full" : "none");
}

function scan(
  index: IndexName,
  db: BinDb,
  prefixes: Buffer[],
  residual: "none" | "fast" | "full",
  pairs?: { authors: string[]; kinds: number[] },
): Plan {
  return { type: "scan", index, db, prefixes, needsCheck: residual !== "none", residual, pairs };
}
