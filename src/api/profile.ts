// Profiles read from the store: which pubkey a path names (npub, nprofile or hex), the kind-0
// metadata parsed leniently, and the latest replaceable events of a pubkey. Reads only; the
// counts come from the counters indexer.
import { bech32 } from "@scure/base";
import type { NostrEvent } from "../nostr/event.ts";
import { readReplaceable, replaceableKey } from "../store/keys.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The hex pubkey a path segment names, or why it names none (an `invalid:` message). */
export function parsePubkeyRef(ref: string): { pubkey: string } | { error: string } {
  if (HEX64.test(ref)) return { pubkey: ref.toLowerCase() };
  let prefix: string;
  let bytes: Uint8Array;
  try {
    const d = bech32.decode(ref as `${string}1${string}`, 5000);
    prefix = d.prefix;
    bytes = bech32.fromWords(d.words);
  } catch (e) {
    return { error: `invalid: not a bech32 npub (${(e as Error).message})` };
  }
  if (prefix === "npub") {
    if (bytes.length !== 32)
      return { error: `invalid: an npub holds 32 bytes, this one holds ${bytes.length}` };
    return { pubkey: Buffer.from(bytes).toString("hex") };
  }
  if (prefix === "nprofile") {
    // TLV: type 0 is the 32-byte pubkey; relay hints (type 1) are ignored.
    for (let at = 0; at + 2 <= bytes.length; ) {
      const type = bytes[at]!;
      const len = bytes[at + 1]!;
      if (type === 0) {
        if (len !== 32 || at + 2 + len > bytes.length)
          return { error: "invalid: the nprofile's pubkey is not 32 bytes" };
        return { pubkey: Buffer.from(bytes.subarray(at + 2, at + 34)).toString("hex") };
      }
      at += 2 + len;
    }
    return { error: "invalid: the nprofile holds no pubkey" };
  }
  return { error: `invalid: expected an npub or nprofile, got a '${prefix}'` };
}

/** NIP-01 / NIP-24 metadata fields returned by the API; each a string or null. */
export const PROFILE_KEYS = [
  "name",
  "display_name",
  "about",
  "picture",
  "banner",
  "nip05",
  "lud16",
  "lud06",
  "website",
] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
export type Metadata = Record<ProfileKey, string | null>;

/** Parses kind-0 content; bad JSON or a non-object gives every field null, non-strings null. */
export function parseMetadata(content: string | undefined): Metadata {
  let raw: unknown;
  try {
    raw = content === undefined ? undefined : JSON.parse(content);
  } catch {
    raw = undefined;
  }
  const o =
    typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
  const out = {} as Metadata;
  for (const k of PROFILE_KEYS) out[k] = str(o[k]);
  // `displayName` is the deprecated spelling some clients still write (NIP-24).
  out.display_name ??= str(o.displayName);
  return out;
}

/** What a reader may see: committed, not expired, not of a kind restricted to its recipients. */
export interface Visibility {
  hwm: number;
  hidden: (serial: number) => boolean;
  restrictedKinds: readonly number[];
}

export const visibleSerial = (v: Visibility, serial: number): boolean => serial <= v.hwm && !v.hidden(serial);

/** The current version of a replaceable event (kinds 0, 3, 10000–19999), if stored and visible. */
export function latestReplaceable(
  s: Store,
  v: Visibility,
  pubkey: string,
  kind: number,
): NostrEvent | undefined {
  const ptr = s.replaceable.get(replaceableKey(pubkey, kind, ""));
  if (ptr === undefined) return undefined;
  const { serial } = readReplaceable(ptr);
  if (!visibleSerial(v, serial)) return undefined;
  const json = readEvent(s, serial);
  return json === undefined ? undefined : (JSON.parse(json) as NostrEvent);
}

export interface Author {
  pubkey: string;
  name: string | null;
  display_name: string | null;
  picture: string | null;
  nip05: string | null;
}

/** A short profile of each author, read once per pubkey for one answer. */
export function authorCache(s: Store, v: Visibility): (pubkey: string) => Author {
  const seen = new Map<string, Author>();
  return (pubkey) => {
    let a = seen.get(pubkey);
    if (!a) {
      const m = parseMetadata(latestReplaceable(s, v, pubkey, 0)?.content);
      a = { pubkey, name: m.name, display_name: m.display_name, picture: m.picture, nip05: m.nip05 };
      seen.set(pubkey, a);
    }
    return a;
  };
}
