// BIP-340 verification through libsecp256k1 via bun:ffi, several times faster than noble.
// Optional: when no usable library is found the loader returns undefined and callers keep noble.
import { dlopen, FFIType, type Pointer, ptr } from "bun:ffi";
import { embeddedFrom, embeddedLibrary } from "./embedded.ts";
import type { SchnorrBackend } from "./verify.ts";

// SECP256K1_CONTEXT_VERIFY. Deprecated (same as NONE) since 0.2.0, but pre-0.2.0 builds call the
// illegal-argument callback, which aborts, if a verify-only op runs on a context created without it.
const CONTEXT_VERIFY = 0x101;

const SYMBOLS = {
  secp256k1_context_create: { args: [FFIType.u32], returns: FFIType.ptr },
  secp256k1_xonly_pubkey_parse: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  secp256k1_schnorrsig_verify: {
    args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.ptr],
    returns: FFIType.i32,
  },
  // Never called. It was added in the same change that gave verify its msglen argument, so its
  // presence proves the 5-argument ABI declared above; the older 4-argument one would crash.
  secp256k1_schnorrsig_sign_custom: { args: [], returns: FFIType.i32 },
} as const;

/** Tried in order after any configured path; bare names go through the dynamic loader's search. */
export const NATIVE_CANDIDATES: readonly string[] =
  process.platform === "darwin"
    ? [
        "libsecp256k1.dylib",
        "libsecp256k1.2.dylib",
        "libsecp256k1.1.dylib",
        "/opt/homebrew/lib/libsecp256k1.dylib",
        "/usr/local/lib/libsecp256k1.dylib",
        "/opt/local/lib/libsecp256k1.dylib",
      ]
    : [
        "libsecp256k1.so.2",
        "libsecp256k1.so.1",
        "libsecp256k1.so",
        "/usr/lib/x86_64-linux-gnu/libsecp256k1.so.2",
        "/usr/lib/x86_64-linux-gnu/libsecp256k1.so.1",
        "/usr/lib/aarch64-linux-gnu/libsecp256k1.so.2",
        "/usr/lib/aarch64-linux-gnu/libsecp256k1.so.1",
        "/usr/lib64/libsecp256k1.so.2",
        "/usr/lib64/libsecp256k1.so.1",
        "/usr/lib/libsecp256k1.so.2",
        "/usr/lib/libsecp256k1.so.1",
        "/usr/local/lib/libsecp256k1.so.2",
        "/usr/local/lib/libsecp256k1.so.1",
        "/usr/local/lib/libsecp256k1.so",
      ];

// Scratch layout: sig | msg.
const SIG = 0;
const MSG = 64;
const SCRATCH_BYTES = 96;

// Parsed public keys, kept so an author seen before costs no secp256k1_xonly_pubkey_parse: that
// call decompresses the point (a field square root), ~5.5 µs of the ~42 µs a verification takes
// on the machine in docs/performance.md, and relays see the same authors over and over. A
// direct-mapped table: slot = low bits of the key (x coordinates are uniform; a crafted
// collision only costs a parse), each slot the key's 32 bytes then libsecp256k1's 64-byte
// secp256k1_xonly_pubkey, which its documentation says may be copied and moved freely.
const CACHE_SLOTS = 1 << 14;
const SLOT_BYTES = 96;
const SLOT_PARSED = 32;

// BIP-340 test vector 1, run once after loading so a library that loads but computes something
// else (wrong ABI, broken build) is refused instead of silently rejecting or accepting events.
const SELF_TEST = {
  pub: "dff1d77f2a671c5f36183726db2341be58feae1da2deced843240f7b502ba659",
  msg: "243f6a8885a308d313198a2e03707344a4093822299f31d0082efa98ec4e6c89",
  sig: "6896bd60eeae296db48a229ff71dfe071bde413e6d43f917dc8dcf8c78de33418906d11ac976abccb20b091292bff4ea897efcb639ea871cfa95f6de339e4b0a",
};

/**
 * `errors` lists candidates refused before the one that loaded (e.g. a bad configured path);
 * `label` says where the library came from, for the start-up line.
 */
export type NativeProbe =
  | { backend: SchnorrBackend; path: string; label: string; errors: string[] }
  | { backend: undefined; errors: string[] };

function open(path: string): SchnorrBackend {
  const lib = dlopen(path, SYMBOLS);
  const { secp256k1_context_create, secp256k1_xonly_pubkey_parse, secp256k1_schnorrsig_verify } = lib.symbols;
  const ctx = secp256k1_context_create(CONTEXT_VERIFY);
  if (!ctx) {
    lib.close();
    throw new Error("secp256k1_context_create returned NULL");
  }
  // Backed by standalone ArrayBuffers, whose storage the GC never moves, so the raw pointers
  // taken once here stay valid; the closure below keeps them (and `lib`) reachable for as long
  // as the backend is, and the context is deliberately never destroyed.
  const scratch = new Uint8Array(new ArrayBuffer(SCRATCH_BYTES));
  const sigPtr = ptr(scratch, SIG);
  const msgPtr = ptr(scratch, MSG);
  const slots = new Uint8Array(new ArrayBuffer(CACHE_SLOTS * SLOT_BYTES));
  const slotsPtr = ptr(slots);
  /** 1 where a slot holds a key that parsed */
  const filled = new Uint8Array(CACHE_SLOTS);

  /** Address of the parsed form of `pubkey`, parsing it into its slot on a miss; 0 if invalid. */
  const parsed = (pubkey: Uint8Array): Pointer | 0 => {
    const slot = (pubkey[0]! | (pubkey[1]! << 8)) & (CACHE_SLOTS - 1);
    const at = slot * SLOT_BYTES;
    if (filled[slot] === 1) {
      let same = true;
      for (let k = 0; k < 32; k++)
        if (slots[at + k] !== pubkey[k]) {
          same = false;
          break;
        }
      if (same) return (slotsPtr + at + SLOT_PARSED) as Pointer;
    }
    slots.set(pubkey, at);
    // Must succeed before verify: an unparsed (zeroed or stale) key struct trips the library's
    // argument check, whose default handler aborts the whole process.
    const key = (slotsPtr + at + SLOT_PARSED) as Pointer;
    if (secp256k1_xonly_pubkey_parse(ctx, key, (slotsPtr + at) as Pointer) !== 1) {
      filled[slot] = 0;
      return 0;
    }
    filled[slot] = 1;
    return key;
  };

  const backend: SchnorrBackend = {
    name: "libsecp256k1",
    verify(sig, msg, pubkey) {
      try {
        if (sig.length !== 64 || msg.length !== 32 || pubkey.length !== 32) return false;
        const key = parsed(pubkey);
        if (key === 0) return false;
        scratch.set(sig, SIG);
        scratch.set(msg, MSG);
        return secp256k1_schnorrsig_verify(ctx, sigPtr, msgPtr, 32, key) === 1;
      } catch {
        return false;
      }
    },
  };

  const sig = Buffer.from(SELF_TEST.sig, "hex");
  const msg = Buffer.from(SELF_TEST.msg, "hex");
  const pub = Buffer.from(SELF_TEST.pub, "hex");
  const good = backend.verify(sig, msg, pub);
  msg[0] = (msg[0] ?? 0) ^ 1;
  const bad = backend.verify(sig, msg, pub);
  if (!good || bad) {
    lib.close();
    throw new Error("self-test against BIP-340 vector 1 failed");
  }
  return backend;
}

/** Like loadNativeBackend, but says why each candidate was refused (for the start-up log). */
export function probeNativeBackend(path?: string): NativeProbe {
  const errors: string[] = [];
  // The host's library first; the copy a compiled binary carries only when the host has none.
  const candidates = [...(path ? [path] : []), ...NATIVE_CANDIDATES];
  if (embeddedLibrary && !candidates.includes(embeddedLibrary)) candidates.push(embeddedLibrary);
  for (const candidate of candidates) {
    try {
      const backend = open(candidate);
      const label =
        candidate === embeddedLibrary
          ? `the copy of ${embeddedFrom ?? "libsecp256k1"} embedded in this binary (the host has none)`
          : candidate;
      return { backend, path: candidate, label, errors };
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      // A missing file is the common case; only keep the interesting failures (missing
      // schnorrsig/extrakeys symbols, failed self-test) plus the configured path's error.
      if (candidate === path || !/no such file|not found|cannot open|image not found/i.test(msg))
        errors.push(`${candidate}: ${msg}`);
    }
  }
  if (errors.length === 0)
    errors.push(
      embeddedLibrary
        ? "libsecp256k1 not found, and the embedded copy did not load"
        : "libsecp256k1 not found",
    );
  return { backend: undefined, errors };
}

/**
 * Opens libsecp256k1 from `path` if given, else from the usual Linux/macOS locations. Returns
 * undefined when nothing loads, the schnorrsig/extrakeys modules are missing, or the self-test fails.
 */
export function loadNativeBackend(path?: string): SchnorrBackend | undefined {
  return probeNativeBackend(path).backend;
}
