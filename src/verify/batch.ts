// Compact wire form of a verification batch shared by the pool (packs) and the worker (checks):
// one transferable buffer holding fixed-size records and the commitments' UTF-8 bytes, answered
// in place. The commitments are encoded straight into it from the JSON of each event's tags and
// content, which ingest serialises once for the stored form too: no commitment string is built,
// cloned to the worker or encoded again there.
import { encodeCommitment } from "../nostr/canonical.ts";
import { isHex64, type NostrEvent } from "../nostr/event.ts";
import type { SchnorrBackend, VerifyResult } from "./verify.ts";

// count 4 | n records | n status bytes | commitment bytes
// Record i at 4 + i*RECORD: id 32 | pubkey 32 | sig 64 | commitment offset 4 | commitment length 4.
// Status bytes: on the way in 0 or CODE_BAD_SIG (hex that cannot decode), on the way back the result.
export const RECORD = 136;
const PUB = 32;
const SIG = 64;
const AT = 128;

export const CODE_OK = 0;
export const CODE_BAD_ID = 1;
export const CODE_BAD_SIG = 2;
export const RESULTS: readonly VerifyResult[] = ["ok", "bad-id", "bad-sig"];

/** An event and the JSON of its tags and content. */
export interface Verifiable {
  e: NostrEvent;
  tags: string;
  content: string;
}

export const verifiable = (e: NostrEvent): Verifiable => ({
  e,
  tags: JSON.stringify(e.tags),
  content: JSON.stringify(e.content),
});

/** Where commitments are encoded before they are copied into a batch of the exact size. */
let scratch = Buffer.allocUnsafe(1 << 18);

/**
 * Packs events whose fate needs hashing. `slot[i]` is event i's record, or -1 for an event decided
 * on the spot: an id that is not 64 lowercase hex can never equal a computed id ("bad-id").
 */
export function packBatch(items: readonly Verifiable[]): { buf: Uint8Array; slot: Int32Array } {
  const slot = new Int32Array(items.length);
  let n = 0;
  let room = 0;
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    slot[i] = isHex64(it.e.id) ? n++ : -1;
    if (slot[i]! >= 0) room += 3 * (it.tags.length + it.content.length) + 100;
  }
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2));
  const offsets = new Uint32Array(n + 1);
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    const j = slot[i]!;
    if (j < 0) continue;
    const it = items[i]!;
    offsets[j] = used;
    used = encodeCommitment(it.e, it.tags, it.content, scratch, used);
  }
  offsets[n] = used;
  const head = 4 + n * (RECORD + 1);
  // Own ArrayBuffer (not Buffer.allocUnsafe's shared slab) so it can be transferred, not copied.
  const buf = Buffer.from(new ArrayBuffer(head + used));
  buf.writeUInt32LE(n, 0);
  scratch.copy(buf, head, 0, used);
  for (let i = 0; i < items.length; i++) {
    const j = slot[i]!;
    if (j < 0) continue;
    const e = items[i]!.e;
    const off = 4 + j * RECORD;
    buf.write(e.id, off, 32, "hex");
    // Same decoding as verifyEvent's Buffer.from(hex): a short decode means the backend would get
    // a short key or sig and say false, so record that rather than verify garbage.
    const pubOk = typeof e.pubkey === "string" && buf.write(e.pubkey, off + PUB, 32, "hex") === 32;
    const sigOk = typeof e.sig === "string" && buf.write(e.sig, off + SIG, 64, "hex") === 64;
    if (!pubOk || !sigOk) buf[4 + n * RECORD + j] = CODE_BAD_SIG;
    buf.writeUInt32LE(head + offsets[j]!, off + AT);
    buf.writeUInt32LE(offsets[j + 1]! - offsets[j]!, off + AT + 4);
  }
  return { buf, slot };
}

const digest = new Uint8Array(32);

/** Checks every record in place, writing result codes into the status bytes; returns `buf`. */
export function verifyPacked(buf: Uint8Array, backend: SchnorrBackend): Uint8Array {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = view.getUint32(0, true);
  const status = 4 + n * RECORD;
  for (let j = 0; j < n; j++) {
    const off = 4 + j * RECORD;
    const at = view.getUint32(off + AT, true);
    const len = view.getUint32(off + AT + 4, true);
    // Bun's native SHA-256 of the commitment's bytes, written into a reused buffer, compared
    // with the decoded claimed id: the same as computeId's hex comparison for lowercase ids.
    Bun.SHA256.hash(buf.subarray(at, at + len), digest);
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
      buf.subarray(off + SIG, off + AT),
      buf.subarray(off, off + PUB),
      buf.subarray(off + PUB, off + SIG),
    );
    buf[status + j] = ok ? CODE_OK : CODE_BAD_SIG;
  }
  return buf;
}

/** Result for input event i, given the packing slots and the answered buffer. */
export function resultAt(slot: Int32Array, answered: Uint8Array, i: number): VerifyResult {
  const j = slot[i]!;
  if (j < 0) return "bad-id";
  const n = answered[0]! | (answered[1]! << 8) | (answered[2]! << 16) | (answered[3]! << 24);
  return RESULTS[answered[4 + n * RECORD + j]!]!;
}
