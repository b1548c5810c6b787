// Which COUNT requests get an `hll` (NIP-45): a single filter of one of the shapes NIP-45 names,
// i.e. exactly one tag condition with exactly one value plus exactly these kinds (any order),
// and nothing else but an ignored `limit`. since/until, authors, ids or search make the request
// an ordinary count: registers merged across relays only mean something for the shared shapes.
import type { Filter } from "../nostr/filter.ts";
import { hllOffset } from "./hll.ts";

export const HLL_SHAPES: readonly { name: string; tag: string; kinds: readonly number[] }[] = [
  { name: "reactions", tag: "e", kinds: [7] },
  { name: "reposts", tag: "e", kinds: [6] },
  { name: "replies", tag: "e", kinds: [1] },
  { name: "quotes", tag: "q", kinds: [1, 1111] },
  { name: "comments", tag: "E", kinds: [1111] },
  { name: "followers", tag: "p", kinds: [3] },
];

export interface HllShape {
  /** which of HLL_SHAPES */
  index: number;
  tag: string;
  value: string;
  kinds: number[];
  offset: number;
}

export function hllShape(filters: readonly Filter[]): HllShape | undefined {
  if (filters.length !== 1) return undefined;
  const f = filters[0]!;
  if (f.ids || f.authors || f.since !== undefined || f.until !== undefined || f.search !== undefined)
    return undefined;
  if (!f.kinds || f.tags?.length !== 1) return undefined;
  const [tag, values] = f.tags[0]!;
  if (values.length !== 1) return undefined;
  const kinds = [...new Set(f.kinds)].sort((a, b) => a - b);
  const index = HLL_SHAPES.findIndex(
    (s) => s.tag === tag && s.kinds.length === kinds.length && s.kinds.every((k, i) => k === kinds[i]),
  );
  if (index < 0) return undefined;
  const value = values[0]!;
  return { index, tag, value, kinds, offset: hllOffset(value) };
}
