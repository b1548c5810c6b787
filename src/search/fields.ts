// Which text of an event is searchable, and the language it declares. Events of kinds missing
// from SEARCH_FIELDS have no searchable text: they are not indexed and never match a `search`.
import type { NostrEvent } from "../nostr/event.ts";
import { tokenize } from "./tokenize.ts";

export interface KindFields {
  /** `text`: the content as is; `profile`: the content is NIP-01 metadata JSON */
  content: "text" | "profile";
  /** tags whose first value is indexed as well (the first tag of each name) */
  tags: readonly string[];
}

/** kind → indexed fields. A constant for now; it could come from configuration later. */
export const SEARCH_FIELDS: ReadonlyMap<number, KindFields> = new Map([
  [0, { content: "profile", tags: [] }],
  [1, { content: "text", tags: [] }],
  [30023, { content: "text", tags: ["title", "summary"] }],
]);

/** Fields of kind-0 metadata that are searched (other keys such as picture or lud16 are not). */
export const PROFILE_FIELDS = ["name", "display_name", "about", "nip05"] as const;

/** The searchable texts of an event (empty for kinds that are not indexed). */
export function indexedTexts(e: NostrEvent): string[] {
  const spec = SEARCH_FIELDS.get(e.kind);
  if (!spec) return [];
  const out: string[] = [];
  if (spec.content === "text") out.push(e.content);
  else out.push(...profileTexts(e.content));
  for (const name of spec.tags) {
    const value = e.tags.find((t) => t[0] === name)?.[1];
    if (value) out.push(value);
  }
  return out;
}

function profileTexts(content: string): string[] {
  let meta: unknown;
  try {
    meta = JSON.parse(content);
  } catch {
    return []; // metadata that is not JSON has nothing to search
  }
  if (typeof meta !== "object" || meta === null) return [];
  const rec = meta as Record<string, unknown>;
  return PROFILE_FIELDS.map((k) => rec[k]).filter((v): v is string => typeof v === "string");
}

/** Every token of the event's searchable text, in order, with repeats. */
export function eventTokens(e: NostrEvent): string[] {
  const out: string[] = [];
  for (const text of indexedTexts(e)) tokenize(text, out);
  return out;
}

/**
 * Languages the event declares with NIP-32 labels: `["l", "<code>", "ISO-639-1"]` (the mark
 * compared case-insensitively; an `L` tag is not required). Codes are lowercased and cut to the
 * primary subtag (`pt-BR` → `pt`).
 */
export function eventLanguages(e: NostrEvent): string[] {
  const out: string[] = [];
  for (const t of e.tags) {
    if (t[0] !== "l" || t[1] === undefined || t[2]?.toLowerCase() !== "iso-639-1") continue;
    out.push(languageCode(t[1]));
  }
  return out;
}

export const languageCode = (s: string): string => s.toLowerCase().split(/[-_]/)[0]!;
