// Compact wire form of a verification batch shared by the pool (packs) and the worker (checks):
// one transferable buffer of fixed-size records plus the commitment strings, answered in place.
import { commitment } from "../nostr/canonical.ts";
import { isHex64, type NostrEvent } from "../nostr/event.ts";
import type { SchnorrBackend, VerifyResult } from "./verify.ts";

// Record i sits at i*RECORD: id (32) | pubkey (32) | sig (64). After the n records come n status
// bytes: on the way in 0 or CODE_BAD_SIG (hex that cannot decode), on the way back the result.
export const RECORD = 128;
const PUB = 32;
const SIG = 64;

export const CODE_OK = 0;
export const CODE_BAD_ID = 1;
export const CODE_BAD_SIG = 2;
export const RESULTS: readonly VerifyResult[] = ["ok", "bad-id", "bad-sig"];

export interface PackedBatch {
  buf: Uint8Array;
  commitments: string[];
}

/**
 * Packs events whose fate needs hashing. Returns undefined for an event decided on the spot:
 * an id that is not 64 lowercase hex can never equal a computed id, so it is "bad-id" at once.
 */
export function packBatch(events: readonly NostrEvent[]): {
  batch: PackedBatch;
  /** For each input event: its index in the batch, or -1 when it is already known to be bad-id. */
  slot: Int32Array;
} {
  const slot = new Int32Array(events.length);
  const commitments: string[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    slot[i] = isHex64(e.id) ? commitments.push(commitment(e)) - 1 : -1;
  }
  const n = commitments.length;
  // Own ArrayBuffer (not Buffer.allocUnsafe's shared slab) so it can be transferred, not copied.
  const buf = Buffer.from(new ArrayBuffer(n * (RECORD + 1)));
  for (let i = 0; i < events.length; i++) {
    const j = slot[i]!;
    if (j < 0) continue;
    const e = events[i]!;
    const off = j * RECORD;
    buf.write(e.id, off, 32, "hex");
    // Same decoding as verifyEvent's Buffer.from(hex): a short decode means the backend would get
    // a short key or sig and say false, so record that rather than verify garbage.
    const pubOk = typeof e.pubkey === "string" && buf.write(e.pubkey, off + PUB, 32, "hex") === 32;
    const sigOk = typeof e.sig === "string" && buf.write(e.sig, off + SIG, 64, "hex") === 64;
    if (!pubOk || !sigOk) buf[n * RECORD + j] = CODE_BAD_SIG;
  }
  return { batch: { buf, commitments }, slot };
}

const digest = new Uint8Array(32);

/** Checks every record in place, writing result codes into the status bytes; returns `buf`. */
export function verifyPacked(batch: PackedBatch, backend: SchnorrBackend): Uint8Array {
  const { buf, commitments } = batch;
  const n = commitments.length;
  const status = n * RECORD;
  for (let j = 0; j < n; j++) {
    const off = j * RECORD;
    // Bun's native SHA-256, written into a reused buffer; the bytes are then compared with the
    // decoded claimed id, which is equivalent to computeId's hex comparison for lowercase ids.
    Bun.SHA256.hash(commitments[j]!, digest);
    let same = true;
    for (let k = 0; k < 32; k++) {
      if (digest[k] !== buf[off + k]) {
        same = false;
        break;
      }
    }
    if (!same) {
      buf[status + j] = CODE_BAD_ID;
      continue;
    }
    if (buf[status + j] === CODE_BAD_SIG) continue;
    const ok = backend.verify(
      buf.subarray(off + SIG, off + RECORD),
      buf.subarray(off, off + PUB),
      buf.subarray(off + PUB, off + SIG),
    );
    buf[status + j] = ok ? CODE_OK : CODE_BAD_SIG;
  }
  return buf;
}

/** Result for input event i, given the packing slots and the answered buffer. */
export function resultAt(slot: Int32Array, answered: Uint8Array, n: number, i: number): VerifyResult {
  const j = slot[i]!;
  return j < 0 ? "bad-id" : RESULTS[answered[n * RECORD + j]!]!;
}
