// What one event adds to the aggregates, as a pure function of the event: which notes it
// engages (NIP-25 reactions, NIP-18 reposts, NIP-10 replies, NIP-57 zap receipts), whom it
// follows (NIP-02), which relays it lists (NIP-65). The counters indexer adds these on put and
// subtracts the same on remove, so both directions always agree.
import { decode as decodeBolt11 } from "light-bolt11-decoder";
import type { NostrEvent } from "../nostr/event.ts";
import { isHex64 } from "../nostr/event.ts";
import { normalizeRelayUrl } from "../nostr/relay-url.ts";

export type NoteField = "likes" | "reactions" | "reposts" | "replies" | "zaps";

/** One unit of engagement of the note `id`; zaps carry their amount in millisatoshis. */
export interface Engagement {
  id: string;
  field: NoteField;
  msats?: bigint;
}

const eTags = (e: NostrEvent): string[][] => e.tags.filter((t) => t[0] === "e" && isHex64(t[1]));

/** NIP-25: `+` or empty content is a like; anything else (`-`, an emoji) another reaction. */
export const isLike = (content: string): boolean => content === "+" || content === "";

/**
 * NIP-10: the events a kind-1 note replies to. With markers (preferred), the `root` and `reply`
 * targets; `mention` and unmarked tags in a marked note are citations, not replies. Without any
 * marker (the deprecated positional scheme), the first (root) and the last (replied-to) `e` tag;
 * the ones between are mentions. So a thread's root counts every reply in the thread and any
 * other note counts its direct replies. Each target once.
 */
export function replyTargets(e: NostrEvent): string[] {
  const tags = eTags(e);
  if (tags.length === 0) return [];
  const marked = tags.some((t) => t[3] === "root" || t[3] === "reply" || t[3] === "mention");
  const ids = marked
    ? tags.filter((t) => t[3] === "root" || t[3] === "reply").map((t) => t[1]!)
    : [tags[0]![1]!, tags[tags.length - 1]![1]!];
  return [...new Set(ids)];
}

/**
 * The amount of a BOLT-11 payment request in millisatoshis, from its human-readable part, with
 * the checksum checked by light-bolt11-decoder; undefined when it does not decode or names no
 * amount (an invoice "for any amount" says nothing about what was paid).
 */
export function invoiceMsats(bolt11: string): bigint | undefined {
  try {
    const amount = decodeBolt11(bolt11).sections.find((s) => s.name === "amount");
    if (!amount || !("value" in amount) || typeof amount.value !== "string") return undefined;
    const msats = BigInt(amount.value);
    return msats > 0n ? msats : undefined;
  } catch {
    return undefined;
  }
}

/** The notes an event engages, with the counter each one moves. */
export function engagements(e: NostrEvent): Engagement[] {
  switch (e.kind) {
    case 1:
      return replyTargets(e).map((id) => ({ id, field: "replies" }));
    case 6: {
      // NIP-18: the reposted note is the `e` tag (the first, if a client added others).
      const t = eTags(e)[0];
      return t ? [{ id: t[1]!, field: "reposts" }] : [];
    }
    case 7: {
      // NIP-25: the target is the last `e` tag.
      const tags = eTags(e);
      const t = tags[tags.length - 1];
      return t ? [{ id: t[1]!, field: isLike(e.content) ? "likes" : "reactions" }] : [];
    }
    case 9735: {
      // NIP-57 receipt: the zapped note is its `e` tag, the amount is the invoice's.
      const t = eTags(e)[0];
      const bolt11 = e.tags.find((x) => x[0] === "bolt11")?.[1];
      const msats = bolt11 === undefined ? undefined : invoiceMsats(bolt11);
      return t && msats !== undefined ? [{ id: t[1]!, field: "zaps", msats }] : [];
    }
    default:
      return [];
  }
}

/** NIP-02: the distinct pubkeys a contact list follows, in order. */
export function followed(e: NostrEvent): string[] {
  const out = new Set<string>();
  for (const t of e.tags) if (t[0] === "p" && isHex64(t[1])) out.add(t[1]);
  return [...out];
}

export interface RelayListEntry {
  url: string;
  read: boolean;
  write: boolean;
}

/**
 * NIP-65: a relay list's `r` tags, URLs normalised (ws/wss only; others dropped). No marker means
 * read and write; `read` or `write` means only that. A URL listed twice merges its markers.
 */
export function relayList(e: NostrEvent): RelayListEntry[] {
  const byUrl = new Map<string, RelayListEntry>();
  for (const t of e.tags) {
    if (t[0] !== "r" || t[1] === undefined) continue;
    const url = normalizeRelayUrl(t[1]);
    if (url === undefined) continue;
    const marker = t[2];
    const read = marker !== "write";
    const write = marker !== "read";
    const had = byUrl.get(url);
    if (had) {
      had.read ||= read;
      had.write ||= write;
    } else byUrl.set(url, { url, read, write });
  }
  return [...byUrl.values()];
}
