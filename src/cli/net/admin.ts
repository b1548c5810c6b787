// `relay admin`: calls a relay's NIP-86 management API (ours or any other) with a NIP-98
// Authorization header signed by the operator's key, and prints the JSON result.
import * as nip19 from "nostr-tools/nip19";
import * as nip98 from "nostr-tools/nip98";
import { finalizeEvent } from "nostr-tools/pure";
import { parseArgs, UsageError } from "../args.ts";
import { guarded, IoError } from "../output.ts";
import { secretKey } from "./nip42.ts";
import { timeoutMs } from "./ws-client.ts";

export const help = `relay admin URL METHOD [PARAMS...] [--nsec-file F] [--timeout S]
relay admin URL METHOD --params JSON

Calls the NIP-86 management method METHOD of the relay at URL (http(s):// or its ws(s)://
twin) and prints the result as one line of JSON. The call is signed (NIP-98) with the secret
key (nsec1... or 64 hex characters) read from --nsec-file F or, without it, from RELAY_NSEC;
the relay accepts it only from a pubkey in its management.admins.

PARAMS are sent as strings, except a kind (allowkind, disallowkind), sent as a number; an
npub or note is sent as hex. --params sends a JSON array as it is.

  relay admin https://relay.example.com supportedmethods
  relay admin https://relay.example.com banpubkey npub1... "spam"
  relay admin https://relay.example.com listbannedpubkeys
  relay admin https://relay.example.com allowkind 1
  relay admin https://relay.example.com blockip 203.0.113.7 "abuse"
  relay admin https://relay.example.com changerelayname "My relay"

  --timeout S   seconds to wait for the answer (default 10)

Exit status: 0 when the relay answers a result, 1 when it answers an error (unauthorised,
unknown method, bad params) or cannot be reached, 2 for bad arguments.`;

const KINDS = new Set(["allowkind", "disallowkind"]);

export function run(argv: string[]): Promise<number> {
  return guarded("admin", async () => {
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs(argv);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const { positional, flags } = parsed;
    for (const f of Object.keys(flags))
      if (!["nsec-file", "timeout", "params"].includes(f)) throw new UsageError(`unknown option --${f}`);
    const [target, method, ...rest] = positional;
    if (target === undefined) throw new UsageError("a relay URL is needed");
    if (method === undefined) throw new UsageError("a method is needed (supportedmethods lists them)");
    const url = httpUrl(target);
    const params = flags.params === undefined ? paramsOf(method, rest) : rawParams(flags.params, rest);
    const wait = timeoutMs(flags.timeout, 10);
    const sk = secretKey(flags["nsec-file"]);
    const call = { method, params };
    const body = JSON.stringify(call);
    // nostr-tools hashes JSON.stringify(call), which is exactly the body sent.
    const auth = await nip98.getToken(url, "POST", (e) => finalizeEvent(e, sk), true, call);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/nostr+json+rpc", Authorization: auth },
        body,
        signal: AbortSignal.timeout(wait),
      });
    } catch (e) {
      throw new IoError(`${url}: ${(e as Error).message}`);
    }
    const text = await res.text();
    let answer: { result?: unknown; error?: unknown };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new IoError(`${url}: HTTP ${res.status}, not a NIP-86 answer: ${text.slice(0, 200).trim()}`);
    }
    if (typeof answer.error === "string" && answer.error !== "")
      throw new IoError(`${method}: ${answer.error} (HTTP ${res.status})`);
    if (!res.ok) throw new IoError(`${url}: HTTP ${res.status}`);
    console.log(JSON.stringify(answer.result ?? null));
    return 0;
  });
}

/** The http(s) URL the call is posted to (and signed for); ws(s):// is taken as its twin. */
function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`'${value}' is not a URL; expected https://host or wss://host`);
  }
  if (url.protocol === "ws:" || url.protocol === "wss:") url.protocol = url.protocol.replace("ws", "http");
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`relay URL must start with http(s):// or ws(s)://, got '${value}'`);
  return url.href;
}

function paramsOf(method: string, args: string[]): unknown[] {
  return args.map((a, i) => {
    if (i === 0 && KINDS.has(method)) {
      if (!/^\d+$/.test(a)) throw new UsageError(`${method} takes a kind, an integer, got '${a}'`);
      return Number(a);
    }
    return /^(npub|note)1/.test(a) ? hexOf(a) : a;
  });
}

/** Other relays expect hex (NIP-86); an npub or note from a client is turned into it here. */
function hexOf(bech: string): string {
  try {
    const d = nip19.decode(bech as `npub1${string}`);
    if (typeof d.data === "string") return d.data;
  } catch {}
  throw new UsageError(`'${bech}' is not a valid ${bech.slice(0, 4)}`);
}

function rawParams(json: string, extra: string[]): unknown[] {
  if (extra.length > 0) throw new UsageError("give the params either as arguments or as --params, not both");
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new UsageError("--params must be a JSON array");
  }
  if (!Array.isArray(v)) throw new UsageError("--params must be a JSON array");
  return v;
}
