// `relay nip19 encode|decode`: NIP-19 bech32 entities (npub, nsec, note, nprofile, nevent, naddr,
// nrelay) for operators who need to turn hex from logs or configs into shareable strings and back.
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { bech32 } from "@scure/base";
import * as nip19 from "nostr-tools/nip19";
import { parseArgs, takeRepeated, UsageError } from "./args.ts";
import { guarded } from "./output.ts";

export const help = `relay nip19 encode <type> ...
relay nip19 decode <bech32>

encode:
  npub <hex pubkey>
  nsec <hex secret key>
  note <hex event id>
  nprofile <hex pubkey> [--relay URL]...
  nevent <hex event id> [--relay URL]... [--author HEX] [--kind N]
  naddr --identifier D --author HEX --kind N [--relay URL]...   (--pubkey is --author)
  nrelay <relay URL>

decode prints one JSON object {"type", "data"} with every field of the entity; a leading
'nostr:' (NIP-21) is accepted. Bad input exits with status 2.`;

/** Bad input from the user: reported as one line on stderr with exit status 2. */

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

export function run(argv: string[]): Promise<number> {
  return guarded("nip19", async () => {
    console.log(command(argv));
    return 0;
  });
}

function command(argv: string[]): string {
  const [verb, ...rest] = argv;
  if (verb === "encode") return encode(rest);
  if (verb === "decode") {
    const { positional, flags } = parse(rest);
    if (positional.length !== 1 || Object.keys(flags).length > 0) {
      throw new UsageError("decode takes exactly one bech32 string");
    }
    return JSON.stringify(decode(positional[0]!));
  }
  throw new UsageError(`expected 'encode' or 'decode'\n\n${help}`);
}

// --- encoding ---------------------------------------------------------------------------------

/** Which flags and how many positionals each type takes, so stray input is refused, not ignored. */
const SHAPES: Record<string, { args: number; flags: string[] }> = {
  npub: { args: 1, flags: [] },
  nsec: { args: 1, flags: [] },
  note: { args: 1, flags: [] },
  nrelay: { args: 1, flags: [] },
  nprofile: { args: 1, flags: ["relay"] },
  nevent: { args: 1, flags: ["relay", "author", "kind"] },
  naddr: { args: 0, flags: ["relay", "author", "pubkey", "kind", "identifier"] },
};

function encode(argv: string[]): string {
  const [type, ...rest] = argv;
  const shape = type === undefined ? undefined : SHAPES[type];
  if (!type || !shape) {
    const what = type === undefined ? "encode needs a type" : `unknown type '${type}'`;
    throw new UsageError(`${what}; one of ${Object.keys(SHAPES).join(", ")}`);
  }
  const { values: relays, rest: others } = takeRepeated(rest, "relay");
  const { positional, flags } = parse(others);
  if (relays.length > 0 && !shape.flags.includes("relay")) throw new UsageError(`${type} takes no --relay`);
  for (const f of Object.keys(flags)) {
    if (!shape.flags.includes(f)) throw new UsageError(`${type} takes no --${f}`);
  }
  if (positional.length !== shape.args) {
    throw new UsageError(`${type} takes ${shape.args === 0 ? "no" : "exactly one"} positional argument`);
  }
  const arg = positional[0]!;
  const relayTlvs = relays.map((r): Tlv => [1, relayUrl(r)]);
  switch (type) {
    case "npub":
      return nip19.npubEncode(bytesToHex(hex32(arg, "pubkey")));
    case "nsec":
      return nip19.nsecEncode(hex32(arg, "secret key"));
    case "note":
      return nip19.noteEncode(bytesToHex(hex32(arg, "event id")));
    case "nrelay":
      return tlvEncode("nrelay", [[0, relayUrl(arg)]]);
    case "nprofile":
      return tlvEncode("nprofile", [[0, hex32(arg, "pubkey")], ...relayTlvs]);
    case "nevent": {
      const author: Tlv[] = flags.author === undefined ? [] : [[2, hex32(flags.author, "--author")]];
      const kind: Tlv[] = flags.kind === undefined ? [] : [[3, kindBytes(flags.kind)]];
      return tlvEncode("nevent", [[0, hex32(arg, "event id")], ...relayTlvs, ...author, ...kind]);
    }
    default: {
      // naddr, the one type left in SHAPES
      if (flags.author !== undefined && flags.pubkey !== undefined) {
        throw new UsageError("give the naddr author once, with --author or --pubkey");
      }
      const author = flags.author ?? flags.pubkey;
      if (flags.identifier === undefined)
        throw new UsageError("naddr needs --identifier (the d tag, may be '')");
      if (author === undefined) throw new UsageError("naddr needs --author (hex pubkey)");
      if (flags.kind === undefined) throw new UsageError("naddr needs --kind");
      const [d, pk, kind] = [utf8.encode(flags.identifier), hex32(author, "--author"), kindBytes(flags.kind)];
      return tlvEncode("naddr", [[0, d], ...relayTlvs, [2, pk], [3, kind]]);
    }
  }
}

type Tlv = [type: number, value: Uint8Array];

// nostr-tools writes TLVs highest type first; we write them in type order like NIP-19's own
// examples, so `encode` reproduces the published strings. Both orders decode the same.
function tlvEncode(prefix: string, tlvs: Tlv[]): string {
  const size = tlvs.reduce((n, [, v]) => n + 2 + v.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const [t, v] of tlvs) {
    // L is one byte: a longer value would silently wrap and corrupt everything after it.
    if (v.length > 255) throw new UsageError(`a ${prefix} field is ${v.length} bytes; at most 255 fit`);
    out[at] = t;
    out[at + 1] = v.length;
    out.set(v, at + 2);
    at += 2 + v.length;
  }
  return bech32.encode(prefix, bech32.toWords(out), nip19.Bech32MaxSize);
}

function hex32(value: string, what: string): Uint8Array {
  if (!/^[0-9a-f]{64}$/i.test(value))
    throw new UsageError(`${what} must be 64 hex characters, got '${value}'`);
  return hexToBytes(value.toLowerCase());
}

function kindBytes(value: string): Uint8Array {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 0xffffffff) {
    throw new UsageError(`--kind must be an integer from 0 to 4294967295, got '${value}'`);
  }
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, false);
  return out;
}

// A relay hint is only useful if a client can connect to it, so anything but ws(s) is refused.
function relayUrl(value: string): Uint8Array {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`'${value}' is not a URL`);
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new UsageError(`relay URL must start with ws:// or wss://, got '${value}'`);
  }
  return utf8.encode(value);
}

// --- decoding ---------------------------------------------------------------------------------

type Decoded = { type: string; data: unknown };

function decode(input: string): Decoded {
  const code = input.startsWith("nostr:") ? input.slice(6) : input;
  let prefix: string;
  let bytes: Uint8Array;
  try {
    const d = bech32.decode(code as `${string}1${string}`, nip19.Bech32MaxSize);
    prefix = d.prefix;
    bytes = bech32.fromWords(d.words);
  } catch (e) {
    const msg = (e as Error).message;
    // scure's message prints the expected checksum, which only invites "fixing" a typo wrongly.
    if (/checksum/i.test(msg)) throw new UsageError(`'${input}' has a bad bech32 checksum (mistyped?)`);
    throw new UsageError(`'${input}' is not bech32: ${msg}`);
  }
  if (prefix === "nrelay") return { type: "nrelay", data: nrelayUrl(bytes) };
  if (!(prefix in SHAPES)) {
    throw new UsageError(`unknown NIP-19 type '${prefix}'; known: ${Object.keys(SHAPES).join(", ")}`);
  }
  let decoded: nip19.DecodedResult;
  try {
    decoded = nip19.decode(code);
  } catch (e) {
    throw new UsageError(`invalid ${prefix}: ${(e as Error).message}`);
  }
  // nostr-tools does not check the length of bare keys and ids; a 31-byte "npub" is not one.
  if (decoded.type === "nsec" || decoded.type === "npub" || decoded.type === "note") {
    if (bytes.length !== 32) throw new UsageError(`invalid ${prefix}: ${bytes.length} bytes, expected 32`);
  }
  if (decoded.type === "nsec") return { type: "nsec", data: bytesToHex(decoded.data) };
  return decoded;
}

function nrelayUrl(bytes: Uint8Array): string {
  let url: string | undefined;
  for (let at = 0; at < bytes.length; ) {
    const t = bytes[at]!;
    const len = bytes[at + 1];
    if (len === undefined || at + 2 + len > bytes.length)
      throw new UsageError("invalid nrelay: truncated TLV");
    // Unknown TLV types are skipped, as NIP-19 asks, so newer encoders stay readable.
    if (t === 0 && url === undefined) url = textOf(bytes.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  if (url === undefined) throw new UsageError("invalid nrelay: missing TLV 0 (the relay URL)");
  return url;
}

function textOf(bytes: Uint8Array): string {
  try {
    return fromUtf8.decode(bytes);
  } catch {
    throw new UsageError("invalid nrelay: the relay URL is not UTF-8");
  }
}

// --- arguments --------------------------------------------------------------------------------

function parse(argv: string[]): ReturnType<typeof parseArgs> {
  try {
    return parseArgs(argv);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
