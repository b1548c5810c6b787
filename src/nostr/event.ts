// Event shape and structural validation (NIP-01). Owns what a well-formed event is;
// it does not hash, verify signatures or touch storage.
import type { Reject } from "../wire/reasons.ts";
import { invalid } from "../wire/reasons.ts";

export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

export interface EventLimits {
  maxTags: number;
  maxTagValues: number;
  maxContentLength: number;
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** 64 lowercase hex characters (an id or a pubkey). */
export const hex64 = (s: string): boolean => s.length === 64 && HEX64.test(s);
export const isHex64 = (s: unknown): s is string => typeof s === "string" && hex64(s);

/** Checks field types and sizes. Returns the typed event or the reason it is refused. */
export function checkEventShape(raw: unknown, limits: EventLimits): NostrEvent | Reject {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return invalid("event must be a JSON object");
  const e = raw as Record<string, unknown>;
  if (!isHex64(e.id)) return invalid("id must be 64 lowercase hex characters");
  if (!isHex64(e.pubkey)) return invalid("pubkey must be 64 lowercase hex characters");
  if (typeof e.sig !== "string" || e.sig.length !== 128 || !HEX128.test(e.sig))
    return invalid("sig must be 128 lowercase hex characters");
  if (!Number.isSafeInteger(e.created_at) || (e.created_at as number) < 0)
    return invalid("created_at must be a non-negative integer");
  if (!Number.isInteger(e.kind) || (e.kind as number) < 0 || (e.kind as number) > 65535)
    return invalid("kind must be an integer between 0 and 65535");
  if (typeof e.content !== "string") return invalid("content must be a string");
  if (e.content.length > limits.maxContentLength)
    return invalid(`content is longer than ${limits.maxContentLength} characters`);
  if (!Array.isArray(e.tags)) return invalid("tags must be an array");
  if (e.tags.length > limits.maxTags) return invalid(`more than ${limits.maxTags} tags`);
  for (const tag of e.tags) {
    if (!Array.isArray(tag)) return invalid("each tag must be an array of strings");
    if (tag.length > limits.maxTagValues) return invalid(`a tag has more than ${limits.maxTagValues} values`);
    for (const v of tag) if (typeof v !== "string") return invalid("each tag must be an array of strings");
  }
  return e as unknown as NostrEvent;
}

/** The value of the first tag named `name`, as NIP-01 reads `d` for addressable events. */
export function firstTagValue(event: NostrEvent, name: string): string | undefined {
  for (const t of event.tags) if (t[0] === name) return t[1] ?? "";
  return undefined;
}

/** The NIP-40 expiration time of an event, if it carries a well-formed `expiration` tag. */
export function expirationOf(e: NostrEvent): number | undefined {
  for (const t of e.tags) {
    if (t[0] !== "expiration" || t[1] === undefined) continue;
    if (!/^\d{1,15}$/.test(t[1])) return undefined;
    return Number(t[1]);
  }
  return undefined;
}
