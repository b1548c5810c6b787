// What one event adds to the counts of the notes it engages, for a relay whose API is off: the
// page then fetches the engagement events themselves and counts them here. The rules are the
// relay's (src/engagement/engagement.ts, documented in docs/api.md "Counting"): that module reads
// invoices with light-bolt11-decoder, a CommonJS package that would bring its own copy of
// @scure/base into the bundle (16 kB), so the invoice amount is read here with the copy the page
// already has. test/explorer/tally.test.ts runs both over the same events and invoices.
import { bech32 } from "@scure/base";
import { eTags, replyTargets } from "../nostr/nip10.ts";
import type { NostrEvent } from "../relay/socket.ts";

export type Field = "likes" | "reactions" | "reposts" | "replies" | "zaps";

export interface Engagement {
  id: string;
  field: Field;
  msats?: bigint;
}

/** The kinds that engage a note: replies, reposts, reactions, zap receipts. */
export const ENGAGING_KINDS = [1, 6, 7, 9735];

/** The notes an event engages and the counter each one moves (engagements() on the relay). */
export function engagements(ev: NostrEvent): Engagement[] {
  switch (ev.kind) {
    case 1:
      return replyTargets(ev).map((id) => ({ id, field: "replies" }));
    case 6: {
      const t = eTags(ev)[0];
      return t ? [{ id: t[1]!, field: "reposts" }] : [];
    }
    case 7: {
      const tags = eTags(ev);
      const t = tags[tags.length - 1];
      const like = ev.content === "+" || ev.content === "";
      return t ? [{ id: t[1]!, field: like ? "likes" : "reactions" }] : [];
    }
    case 9735: {
      const t = eTags(ev)[0];
      const bolt11 = ev.tags.find((x) => x[0] === "bolt11")?.[1];
      const msats = bolt11 === undefined ? undefined : invoiceMsats(bolt11);
      return t && msats !== undefined ? [{ id: t[1]!, field: "zaps", msats }] : [];
    }
    default:
      return [];
  }
}

const NETWORKS = ["bc", "tb", "tbs", "bcrt", "sb"];
const DIVISORS: Record<string, bigint> = { m: 1000n, u: 1000000n, n: 1000000000n, p: 1000000000000n };
const MSATS_PER_BTC = 100000000000n;
const MAX_MSATS = 2100000000000000000n;
/**
 * Tagged fields whose value light-bolt11-decoder converts to bytes and then fails on when that
 * conversion does (bad padding). The description (13) is decoded as text, which does not fail.
 */
const BYTE_FIELDS = new Set([1, 3, 16, 19, 23, 27]);

/**
 * The amount of a BOLT-11 invoice in millisatoshis, or undefined where light-bolt11-decoder
 * throws or finds no amount: a bad checksum, an unknown network, a malformed amount, a tagged
 * field or signature whose words do not convert to bytes.
 */
export function invoiceMsats(bolt11: string): bigint | undefined {
  if (bolt11.slice(0, 2).toLowerCase() !== "ln") return undefined;
  let prefix: string;
  let words: number[];
  try {
    const d = bech32.decode(bolt11 as `${string}1${string}`, false);
    prefix = d.prefix;
    words = d.words;
  } catch {
    return undefined;
  }
  let m = /^ln(\S+?)(\d*)([a-zA-Z]?)$/.exec(prefix);
  if (m && !m[2]) m = /^ln(\S+)$/.exec(prefix);
  if (!m || !NETWORKS.includes(m[1]!)) return undefined;
  const digits = m[2];
  const unit = m[3] ?? "";
  if (!digits) return undefined;
  if (unit !== "" && !(unit in DIVISORS)) return undefined;
  const value = BigInt(digits);
  const msats = unit ? (value * MSATS_PER_BTC) / DIVISORS[unit]! : value * MSATS_PER_BTC;
  if ((unit === "p" && value % 10n !== 0n) || msats > MAX_MSATS) return undefined;
  if (!fieldsConvert(words)) return undefined;
  return msats > 0n ? msats : undefined;
}

/** Walks the tagged fields after the timestamp as the decoder does, and its signature. */
function fieldsConvert(all: number[]): boolean {
  const sig = all.slice(-104);
  let words = all.slice(0, -104).slice(7);
  while (words.length > 0) {
    const code = words[0]!;
    // Two words of length, big-endian (one, or none, at the very end: read as the decoder does).
    const length = words.slice(1, 3).reduce((n, w) => n * 32 + w, 0);
    const value = words.slice(3, 3 + length);
    words = words.slice(3 + length);
    if (BYTE_FIELDS.has(code) && bech32.fromWordsUnsafe(value) === undefined) return false;
  }
  return bech32.fromWordsUnsafe(sig) !== undefined;
}
