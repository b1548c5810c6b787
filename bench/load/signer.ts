// BIP-340 signing for the dataset generator: libsecp256k1 through bun:ffi when the host has it
// (~15× faster than noble here), else noble. Both sign with 32 zero bytes of auxiliary randomness
// (libsecp256k1's NULL means exactly that), so a dataset's signatures are deterministic and the
// same whichever backend made them. The keys are throwaway bench keys: the side-channel hardening
// that fresh aux randomness buys is worth nothing here.
import { dlopen, FFIType, type Pointer, ptr } from "bun:ffi";
import { schnorr } from "@noble/curves/secp256k1.js";
import { NATIVE_CANDIDATES } from "../../src/verify/native.ts";

export interface Signer {
  name: string;
  /** native memory the signer's raw pointers point into, kept reachable with it */
  held?: object;
  /** Signs the 32-byte `msg` with author `who`'s key into `out` (64 bytes) at `at`. */
  sign(msg: Uint8Array, who: number, out: Uint8Array, at: number): void;
}

const ZERO_AUX = new Uint8Array(32);
// SECP256K1_CONTEXT_SIGN: the same as NONE since 0.2.0; older builds refuse to sign without it.
const CONTEXT_SIGN = 0x201;
/** sizeof(secp256k1_keypair) */
const KEYPAIR = 96;

const SYMBOLS = {
  secp256k1_context_create: { args: [FFIType.u32], returns: FFIType.ptr },
  secp256k1_keypair_create: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  secp256k1_schnorrsig_sign32: {
    args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr],
    returns: FFIType.i32,
  },
} as const;

function nobleSigner(sks: Uint8Array): Signer {
  return {
    name: "noble",
    sign(msg, who, out, at) {
      out.set(schnorr.sign(msg, sks.subarray(who * 32, who * 32 + 32), ZERO_AUX), at);
    },
  };
}

function nativeSigner(path: string, sks: Uint8Array): Signer {
  const lib = dlopen(path, SYMBOLS);
  const { secp256k1_context_create } = lib.symbols;
  const ctx = secp256k1_context_create(CONTEXT_SIGN);
  if (!ctx) throw new Error("secp256k1_context_create returned NULL");
  const authors = sks.length / 32;
  // Standalone ArrayBuffers, never moved by the GC, so pointers taken once stay valid.
  // A keypair per author, made on first use: keypair_create is a point multiplication, as
  // costly as the signature itself, and authors sign many events each.
  const keys = new Uint8Array(new ArrayBuffer(authors * KEYPAIR));
  const keysPtr = ptr(keys);
  const made = new Uint8Array(authors);
  const sk = new Uint8Array(new ArrayBuffer(32));
  const skPtr = ptr(sk);
  const scratch = new Uint8Array(new ArrayBuffer(96));
  const sigPtr = ptr(scratch, 0);
  const msgPtr = ptr(scratch, 64);
  // Held on the signer for its whole life: the closure only uses the raw pointers into `keys`,
  // and a buffer nothing references is freed by the GC while the library still writes to it.
  const held = { lib, keys, sk, scratch };
  return {
    name: `libsecp256k1 (${path})`,
    held,
    sign(msg, who, out, at) {
      const key = (keysPtr + who * KEYPAIR) as Pointer;
      if (made[who] !== 1) {
        sk.set(sks.subarray(who * 32, who * 32 + 32));
        if (held.lib.symbols.secp256k1_keypair_create(ctx, key, skPtr) !== 1)
          throw new Error(`bad secret key ${who}`);
        made[who] = 1;
      }
      scratch.set(msg, 64);
      // NULL aux: the 32 zero bytes noble is given above.
      if (held.lib.symbols.secp256k1_schnorrsig_sign32(ctx, sigPtr, msgPtr, key, null) !== 1)
        throw new Error("sign failed");
      out.set(scratch.subarray(0, 64), at);
    },
  };
}

/** A signer for these secret keys (32 bytes each): native if it loads and signs as noble does. */
export function makeSigner(sks: Uint8Array): Signer {
  const noble = nobleSigner(sks);
  if (sks.length === 0) return noble;
  const msg = new Uint8Array(32).fill(7);
  const want = new Uint8Array(64);
  noble.sign(msg, 0, want, 0);
  for (const path of NATIVE_CANDIDATES) {
    try {
      const native = nativeSigner(path, sks);
      // A library that loads but signs differently (wrong ABI, odd build) is not used.
      const got = new Uint8Array(64);
      native.sign(msg, 0, got, 0);
      if (Buffer.from(got).equals(Buffer.from(want))) return native;
    } catch {
      // not there, or missing the schnorrsig/extrakeys modules: try the next, then noble
    }
  }
  return noble;
}
