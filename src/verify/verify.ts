// Pure event verification: canonical id, then the BIP-340 signature. Backends are swappable;
// the pool that batches calls across threads is transport only and lives elsewhere.
import { schnorr } from "@noble/curves/secp256k1.js";
import { computeId } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";

export interface SchnorrBackend {
  readonly name: string;
  /** sig 64 bytes, msg 32 bytes, x-only pubkey 32 bytes. Must return false (never throw) on bad input. */
  verify(sig: Uint8Array, msg: Uint8Array, pubkey: Uint8Array): boolean;
}

export const nobleBackend: SchnorrBackend = {
  name: "noble",
  verify(sig, msg, pubkey) {
    try {
      return schnorr.verify(sig, msg, pubkey);
    } catch {
      return false;
    }
  },
};

export type VerifyResult = "ok" | "bad-id" | "bad-sig";

/**
 * The event's id against the hash of its serialization, then (with `signature`) its BIP-340
 * signature: the one check every path that takes an event in-thread runs (EVENT, AUTH, import).
 */
export function verifyEvent(
  e: NostrEvent,
  backend: SchnorrBackend = nobleBackend,
  signature = true,
): VerifyResult {
  if (computeId(e) !== e.id) return "bad-id";
  if (!signature) return "ok";
  const ok = backend.verify(
    Buffer.from(e.sig, "hex"),
    Buffer.from(e.id, "hex"),
    Buffer.from(e.pubkey, "hex"),
  );
  return ok ? "ok" : "bad-sig";
}
