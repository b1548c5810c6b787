// NIP-98 HTTP auth for the management API: `Authorization: Nostr <base64 kind 27235 event>`
// naming this relay's URL, the request's method and the SHA-256 of its body (required by
// NIP-86), made within a minute, validly signed, by a configured admin. Pure: the caller
// supplies the clock, the verifier and what counts as this relay's URL.

import type { NostrEvent } from "../nostr/event.ts";
import { checkEventShape } from "../nostr/event.ts";
import type { SchnorrBackend } from "../verify/verify.ts";
import { verifyEvent } from "../verify/verify.ts";
import { isReject } from "../wire/reasons.ts";

export const HTTP_AUTH_KIND = 27235;
/** How far created_at may be from now, either way (NIP-98 suggests 60 seconds). */
export const MAX_SKEW_SECONDS = 60;

export interface HttpRequestFacts {
  authorization: string | null;
  method: string;
  body: Uint8Array;
  /** seconds */
  now: number;
  verifier: SchnorrBackend;
  /** whether a ws(s):// URL names this relay (ctx.isOwnUrl) */
  isOwnUrl: (url: string) => boolean;
  admins: readonly string[];
}

export type HttpAuth = { pubkey: string } | { error: string };

const tag = (e: NostrEvent, name: string): string | undefined => e.tags.find((t) => t[0] === name)?.[1];

/** The http(s) form of a relay URL names the same relay as its ws(s) form. */
const asWs = (u: string): string => u.trim().replace(/^http(s?):/i, "ws$1:");

export function authorize(r: HttpRequestFacts): HttpAuth {
  if (r.admins.length === 0) return { error: "management is off: no pubkey is listed in management.admins" };
  const header = r.authorization?.trim();
  if (!header) return { error: "missing Authorization header (NIP-98: 'Nostr <base64 event>')" };
  const m = /^Nostr\s+(\S+)$/i.exec(header);
  if (!m) return { error: "the Authorization header must use the Nostr scheme (NIP-98)" };
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(m[1]!, "base64").toString("utf8"));
  } catch {
    return { error: "the Authorization token is not a base64-encoded JSON event" };
  }
  const e = checkEventShape(raw, { maxTags: 100, maxTagValues: 10, maxContentLength: 4096 });
  if (isReject(e)) return { error: `the authorization event is malformed: ${e.message}` };
  const v = verifyEvent(e, r.verifier);
  if (v === "bad-id") return { error: "the authorization event's id does not match its content" };
  if (v === "bad-sig") return { error: "the authorization event's signature is invalid" };
  if (e.kind !== HTTP_AUTH_KIND)
    return { error: `the authorization event must be of kind ${HTTP_AUTH_KIND}` };
  if (Math.abs(r.now - e.created_at) > MAX_SKEW_SECONDS)
    return {
      error: `the authorization event's created_at is more than ${MAX_SKEW_SECONDS} seconds from now`,
    };
  const u = tag(e, "u");
  if (u === undefined || !r.isOwnUrl(asWs(u)))
    return { error: "the authorization event's u tag does not name this relay" };
  if (tag(e, "method")?.toUpperCase() !== r.method.toUpperCase())
    return { error: `the authorization event's method tag must be ${r.method.toUpperCase()}` };
  const payload = tag(e, "payload");
  if (payload === undefined) return { error: "the authorization event needs a payload tag (NIP-86)" };
  if (payload.toLowerCase() !== new Bun.CryptoHasher("sha256").update(r.body).digest("hex"))
    return { error: "the authorization event's payload tag is not the SHA-256 of the request body" };
  if (!r.admins.includes(e.pubkey)) return { error: "this pubkey may not manage this relay" };
  return { pubkey: e.pubkey };
}
