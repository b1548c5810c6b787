// NIP-42 for the client commands (`relay req`, `relay publish`): the secret key from RELAY_NSEC
// or --nsec-file, and the answer to a relay's challenge, sent when a refusal says auth-required:.
import { readFileSync } from "node:fs";
import { hexToBytes } from "@noble/hashes/utils.js";
import * as nip19 from "nostr-tools/nip19";
import { finalizeEvent } from "nostr-tools/pure";
import { UsageError } from "../args.ts";
import type { RelaySocket } from "./ws-client.ts";

/** Whether a relay's OK or CLOSED message asks the client to authenticate first. */
export const asksAuth = (message: unknown): boolean =>
  typeof message === "string" && message.startsWith("auth-required:");

/** The secret key from --nsec-file or RELAY_NSEC, or undefined when neither is given. */
export function optionalSecretKey(nsecFile: string | undefined): Uint8Array | undefined {
  if (nsecFile === undefined && (process.env.RELAY_NSEC ?? "").trim() === "") return undefined;
  return secretKey(nsecFile);
}

/** The secret key (nsec1... or 64 hex characters) from --nsec-file or RELAY_NSEC; never echoed. */
export function secretKey(nsecFile: string | undefined): Uint8Array {
  let text: string;
  let where: string;
  if (nsecFile !== undefined) {
    try {
      text = readFileSync(nsecFile, "utf8");
    } catch (e) {
      throw new UsageError(`cannot read --nsec-file ${nsecFile}: ${(e as NodeJS.ErrnoException).code ?? e}`);
    }
    where = `--nsec-file ${nsecFile}`;
  } else {
    const env = process.env.RELAY_NSEC;
    if (env === undefined || env.trim() === "") {
      throw new UsageError("no secret key: set RELAY_NSEC (nsec1... or hex) or give --nsec-file F");
    }
    text = env;
    where = "RELAY_NSEC";
  }
  const key = text.trim();
  // The key itself is never echoed: the message names where it came from.
  if (/^[0-9a-f]{64}$/i.test(key)) return hexToBytes(key.toLowerCase());
  if (key.startsWith("nsec1")) {
    try {
      const d = nip19.decode(key as `nsec1${string}`);
      if (d.type === "nsec" && d.data.length === 32) return d.data;
    } catch {}
    throw new UsageError(`the nsec in ${where} is not valid (bad checksum or length)`);
  }
  throw new UsageError(`${where} must hold an nsec1... key or 64 hex characters`);
}

/**
 * Answers the challenge the relay sent on this socket with a signed kind 22242 event and waits
 * for its OK. Resolves undefined once accepted, or with why authentication failed. NOTICEs that
 * arrive meanwhile go to `notice`.
 */
export async function authenticate(
  sock: RelaySocket,
  url: URL,
  sk: Uint8Array,
  deadline: number,
  notice: (text: string) => void,
): Promise<string | undefined> {
  const challenge = sock.challenge;
  if (challenge === undefined) return "the relay asks for AUTH but sent no challenge";
  const e = finalizeEvent(
    {
      kind: 22242,
      created_at: Math.floor(Date.now() / 1000),
      tags: [
        ["relay", url.href],
        ["challenge", challenge],
      ],
      content: "",
    },
    sk,
  );
  sock.send(["AUTH", e]);
  for (;;) {
    const got = await sock.next(deadline);
    if (got.type === "timeout") return "no answer to AUTH in time";
    if (got.type === "closed") return `${got.reason} before answering AUTH`;
    if (got.type === "invalid") continue;
    const [verb, a, b, c] = got.frame;
    if (verb === "NOTICE") notice(String(a));
    else if (verb === "OK" && a === e.id) return b === true ? undefined : `AUTH refused: ${String(c ?? "")}`;
  }
}
