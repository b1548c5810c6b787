// NIP-19 entities in the explorer: what a pasted string names and which view shows it. Bech32 and
// the TLVs come from nostr-tools; nrelay (which nostr-tools no longer knows) is one TLV read and
// written here on top of @scure/base's bech32.
import { bech32 } from "@scure/base";
import * as nip19 from "nostr-tools/nip19";

export type Entity =
  | { type: "npub"; pubkey: string }
  | { type: "nprofile"; pubkey: string; relays: string[] }
  | { type: "note"; id: string }
  | { type: "nevent"; id: string; relays: string[]; author?: string; kind?: number }
  | { type: "naddr"; kind: number; pubkey: string; identifier: string; relays: string[] }
  | { type: "nrelay"; url: string }
  | { type: "nsec" };

export type Decoded = Entity | { type: "error"; message: string };

const HEX32 = /^[0-9a-f]{64}$/;

/** Decodes an entity, with or without a `nostr:` prefix (NIP-21), surrounding space ignored. */
export function decodeEntity(input: string): Decoded {
  const raw = input.trim().replace(/^nostr:/i, "");
  // Bech32 may be all upper case (QR codes); mixed case is invalid and left for decode to refuse.
  const code = raw === raw.toUpperCase() ? raw.toLowerCase() : raw;
  if (!code) return { type: "error", message: "empty" };
  if (code.startsWith("nrelay1")) return decodeNrelay(code);
  let d: nip19.DecodedResult;
  try {
    d = nip19.decode(code);
  } catch (e) {
    return { type: "error", message: (e as Error).message };
  }
  switch (d.type) {
    case "nsec":
      // Never shown: the page only says what it is.
      return { type: "nsec" };
    case "npub":
      return HEX32.test(d.data) ? { type: "npub", pubkey: d.data } : bad("npub");
    case "note":
      return HEX32.test(d.data) ? { type: "note", id: d.data } : bad("note");
    case "nprofile":
      return { type: "nprofile", pubkey: d.data.pubkey, relays: d.data.relays ?? [] };
    case "nevent": {
      const e: Entity = { type: "nevent", id: d.data.id, relays: d.data.relays ?? [] };
      if (d.data.author) e.author = d.data.author;
      if (d.data.kind !== undefined) e.kind = d.data.kind;
      return e;
    }
    case "naddr":
      return {
        type: "naddr",
        kind: d.data.kind,
        pubkey: d.data.pubkey,
        identifier: d.data.identifier,
        relays: d.data.relays ?? [],
      };
    default:
      d satisfies never;
      return bad("entity");
  }
}

const bad = (what: string): Decoded => ({ type: "error", message: `not a 32-byte ${what}` });

function decodeNrelay(code: string): Decoded {
  let bytes: Uint8Array;
  try {
    const d = bech32.decode(code as `${string}1${string}`, nip19.Bech32MaxSize);
    bytes = bech32.fromWords(d.words);
  } catch (e) {
    return { type: "error", message: (e as Error).message };
  }
  // TLV: the relay URL is type 0; other types are skipped.
  for (let i = 0; i + 2 <= bytes.length; ) {
    const [t, len] = [bytes[i]!, bytes[i + 1]!];
    if (i + 2 + len > bytes.length) break;
    if (t === 0) {
      try {
        const url = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(i + 2, i + 2 + len));
        return { type: "nrelay", url };
      } catch {
        break;
      }
    }
    i += 2 + len;
  }
  return { type: "error", message: "nrelay without a relay URL" };
}

export function nrelayEncode(url: string): string {
  const u = new TextEncoder().encode(url);
  if (u.length > 255) throw new Error("relay URL longer than 255 bytes");
  const tlv = new Uint8Array(2 + u.length);
  tlv.set([0, u.length]);
  tlv.set(u, 2);
  return nip19.encodeBytes("nrelay", tlv);
}

export const npub = (pubkey: string): string => nip19.npubEncode(pubkey);
export const note = (id: string): string => nip19.noteEncode(id);
export const nevent = (id: string, author: string, kind: number): string =>
  nip19.neventEncode({ id, author, kind });
export const naddr = (kind: number, pubkey: string, identifier: string): string =>
  nip19.naddrEncode({ kind, pubkey, identifier });

/** The explorer route that shows an entity, if any (a relay is not a route: see `relayHref`). */
export function routeOf(e: Decoded): string | undefined {
  switch (e.type) {
    case "npub":
    case "nprofile":
      return `#/p/${npub(e.pubkey)}`;
    case "note":
    case "nevent":
      return `#/e/${e.id}`;
    case "naddr":
      return `#/a/${naddr(e.kind, e.pubkey, e.identifier)}`;
    default:
      return undefined;
  }
}

/** The http(s) address of a relay's own page, for ws(s) URLs only. */
export function relayHref(url: string): string | undefined {
  return /^wss?:\/\/[^\s/?#]+/i.test(url) ? url.replace(/^ws/i, "http") : undefined;
}

/** A pubkey from a profile route segment: npub, nprofile or hex. */
export function pubkeyOf(segment: string): string | undefined {
  if (HEX32.test(segment)) return segment;
  const d = decodeEntity(segment);
  return d.type === "npub" || d.type === "nprofile" ? d.pubkey : undefined;
}

/** An event id from an event route segment: note, nevent or hex. */
export function eventIdOf(segment: string): string | undefined {
  if (HEX32.test(segment)) return segment;
  const d = decodeEntity(segment);
  return d.type === "note" || d.type === "nevent" ? d.id : undefined;
}
