// Filters (NIP-01): parsing client JSON into a checked Filter, and the naive matcher that is the
// oracle for the store's planner and the live index.
import type { Reject } from "../wire/reasons.ts";
import { invalid } from "../wire/reasons.ts";
import type { NostrEvent } from "./event.ts";
import { isHex64 } from "./event.ts";

export interface Filter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  /** `#x` conditions: tag letter → accepted values */
  tags?: [letter: string, values: string[]][];
  since?: number;
  until?: number;
  limit?: number;
  search?: string;
}

export interface FilterLimits {
  maxFilterValues: number;
}

const TAG_KEY = /^#[a-zA-Z]$/;

function hexList(v: unknown, name: string, lim: FilterLimits): string[] | Reject {
  if (!Array.isArray(v)) return invalid(`${name} must be an array`);
  if (v.length > lim.maxFilterValues) return invalid(`${name} has more than ${lim.maxFilterValues} values`);
  for (const x of v) if (!isHex64(x)) return invalid(`${name} must be 64-character lowercase hex strings`);
  return v as string[];
}

function timestamp(v: unknown, name: string): number | Reject {
  if (!Number.isSafeInteger(v) || (v as number) < 0) return invalid(`${name} must be a non-negative integer`);
  return v as number;
}

export function parseFilter(raw: unknown, lim: FilterLimits): Filter | Reject {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return invalid("a filter must be a JSON object");
  const f: Filter = {};
  for (const [key, v] of Object.entries(raw)) {
    switch (key) {
      case "ids":
      case "authors": {
        const r = hexList(v, key, lim);
        if (!Array.isArray(r)) return r;
        f[key] = r;
        break;
      }
      case "kinds": {
        if (!Array.isArray(v)) return invalid("kinds must be an array");
        if (v.length > lim.maxFilterValues)
          return invalid(`kinds has more than ${lim.maxFilterValues} values`);
        for (const k of v)
          if (!Number.isInteger(k) || k < 0 || k > 65535)
            return invalid("kinds must be integers between 0 and 65535");
        f.kinds = v as number[];
        break;
      }
      case "since":
      case "until": {
        const t = timestamp(v, key);
        if (typeof t !== "number") return t;
        f[key] = t;
        break;
      }
      case "limit": {
        const t = timestamp(v, key);
        if (typeof t !== "number") return t;
        f.limit = t;
        break;
      }
      case "search":
        if (typeof v !== "string") return invalid("search must be a string");
        f.search = v;
        break;
      default: {
        if (!TAG_KEY.test(key)) return invalid(`unknown filter field ${JSON.stringify(key.slice(0, 32))}`);
        if (!Array.isArray(v)) return invalid(`${key} must be an array of strings`);
        if (v.length > lim.maxFilterValues)
          return invalid(`${key} has more than ${lim.maxFilterValues} values`);
        for (const x of v) if (typeof x !== "string") return invalid(`${key} must be an array of strings`);
        f.tags = [...(f.tags ?? []), [key.slice(1), v as string[]]];
      }
    }
  }
  return f;
}

/** Whether an event's searchable text holds every word of a NIP-50 `search` string. */
export type SearchMatcher = (search: string, e: NostrEvent) => boolean;

/** Without a search engine nothing matches a `search` condition. */
const noSearch: SearchMatcher = () => false;

/**
 * True when the event satisfies every condition of the filter (limit aside). A `search`
 * condition is decided by `search` (the search engine's matcher, given by the caller).
 */
export function matchFilter(f: Filter, e: NostrEvent, search: SearchMatcher = noSearch): boolean {
  if (f.ids && !f.ids.includes(e.id)) return false;
  if (f.authors && !f.authors.includes(e.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(e.kind)) return false;
  if (f.since !== undefined && e.created_at < f.since) return false;
  if (f.until !== undefined && e.created_at > f.until) return false;
  if (f.tags) for (const [letter, values] of f.tags) if (!hasTag(e, letter, values)) return false;
  if (f.search !== undefined && !search(f.search, e)) return false;
  return true;
}

export function hasTag(e: NostrEvent, letter: string, values: readonly string[]): boolean {
  for (const t of e.tags) if (t[0] === letter && t[1] !== undefined && values.includes(t[1])) return true;
  return false;
}

/** Newest first; equal created_at ordered by id ascending (NIP-01). */
export const newestFirst = (
  a: { created_at: number; id: string },
  b: { created_at: number; id: string },
): number => b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
