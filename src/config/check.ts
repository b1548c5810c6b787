// Checks on configuration values beyond their type: pubkeys (hex or npub, kept as hex), URLs,
// IP ranges and the few settings that take one of a set of words. A failed check names the key
// (and the entry inside a table) and why; load.ts adds where the value came from.
import { isIP } from "node:net";
import { decode } from "nostr-tools/nip19";
import { isHex64 } from "../nostr/event.ts";
import { checkRetentionRules, RuleError } from "./retention.ts";
import { SCHEMA } from "./schema.ts";

export class CheckError extends Error {
  constructor(
    message: string,
    /** the entry inside a list or table, for table keys (nip05.names.alice) */
    readonly entry?: string,
  ) {
    super(message);
  }
}

/** A pubkey as hex: 64 hex digits (any case) or an npub. */
export function pubkeyHex(value: string): string | undefined {
  const v = value.trim();
  if (isHex64(v.toLowerCase())) return v.toLowerCase();
  if (!v.startsWith("npub1")) return undefined;
  try {
    const d = decode(v as `npub1${string}`);
    return d.type === "npub" ? d.data : undefined;
  } catch {
    return undefined;
  }
}

function pubkey(value: string, entry?: string): string {
  const hex = pubkeyHex(value);
  if (hex === undefined) throw new CheckError(`'${value}' is not a pubkey (64 hex digits or an npub)`, entry);
  return hex;
}

function url(value: string, schemes: string[], entry?: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CheckError(`'${value}' is not a URL`, entry);
  }
  if (!schemes.includes(u.protocol.slice(0, -1)))
    throw new CheckError(`'${value}' must be a ${schemes.join(" or ")} URL`, entry);
  return value;
}

function oneOf(value: string, words: readonly string[]): string {
  if (!words.includes(value)) throw new CheckError(`expected one of ${words.join(", ")}, got '${value}'`);
  return value;
}

function ipRange(value: string): string {
  const slash = value.indexOf("/");
  const addr = slash === -1 ? value : value.slice(0, slash);
  const bits = slash === -1 ? "" : value.slice(slash + 1);
  const v = isIP(addr);
  const max = v === 4 ? 32 : 128;
  if (v === 0) throw new CheckError(`'${value}' is not an IP address or CIDR range`, value);
  if (slash !== -1 && (!/^\d{1,3}$/.test(bits) || Number(bits) > max))
    throw new CheckError(`'${value}' has a bad prefix length (0 to ${max})`, value);
  return value;
}

const pubkeys = (list: string[]) => list.map((v) => pubkey(v, v));

/** Checks and normalises one key's value (already of the right type). */
const CHECKS: Record<string, (v: never) => unknown> = {
  publicUrl: (v: string) => (v === "" ? v : url(v, ["ws", "wss"])),
  "info.pubkey": (v: string) => (v === "" ? v : pubkey(v)),
  "info.icon": (v: string) => (v === "" ? v : url(v, ["http", "https"])),
  "policy.pubkeyAllow": pubkeys,
  "policy.pubkeyDeny": pubkeys,
  "rate.exemptPubkeys": pubkeys,
  "store.pinAuthors": pubkeys,
  "retention.rules": (v: unknown) => {
    try {
      return checkRetentionRules(v);
    } catch (e) {
      throw e instanceof RuleError ? new CheckError(e.message) : e;
    }
  },
  "rate.exemptIps": (v: string[]) => v.map(ipRange),
  "http.trustedProxies": (v: string[]) => v.map(ipRange),
  "http.realIpHeader": (v: string) => {
    if (v !== "" && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(v))
      throw new CheckError(`'${v}' is not an HTTP header name`);
    return v;
  },
  "cluster.natsUrl": (v: string) => {
    for (const part of v.split(",").map((x) => x.trim()))
      if (part !== "" && !/^((nats|tls|ws|wss):\/\/)?[^\s/]+(:\d+)?\/?$/.test(part))
        throw new CheckError(`'${part}' is not a NATS server address (nats://host:port)`, part);
    return v;
  },
  "cluster.stream": (v: string) => {
    if (!/^[A-Za-z0-9_-]+$/.test(v))
      throw new CheckError(`'${v}' is not a stream name (letters, digits, _ and -)`);
    return v;
  },
  "nip05.names": (v: Record<string, string>) =>
    Object.fromEntries(Object.entries(v).map(([name, pk]) => [name, pubkey(pk, name)])),
  "nip05.relays": (v: Record<string, string[]>) =>
    Object.fromEntries(
      Object.entries(v).map(([pk, urls]) => [pubkey(pk, pk), urls.map((u) => url(u, ["ws", "wss"], pk))]),
    ),
};

/** The value to keep for `key`; throws a CheckError saying why it cannot be used. */
export function checkValue(key: string, value: unknown): unknown {
  const values = (SCHEMA as Record<string, { values?: readonly string[] }>)[key]?.values;
  if (values) return oneOf(value as string, values);
  const check = CHECKS[key] as ((v: unknown) => unknown) | undefined;
  return check ? check(value) : value;
}
