// Both Schnorr backends against the official BIP-340 vectors and against each other on nostr
// events; native cases are skipped, and say so in their names, when libsecp256k1 is absent.
import { describe, expect, test } from "bun:test";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { BIP340_VECTORS } from "../../test/fixtures/bip340-vectors.ts";
import { mixedCases, signedEvents } from "../../test/fixtures/signed-events.ts";
import { loadNativeBackend, probeNativeBackend } from "./native.ts";
import { chooseBackend } from "./select.ts";
import { nobleBackend, type SchnorrBackend, verifyEvent } from "./verify.ts";

const native = loadNativeBackend();
const NATIVE = native ? "libsecp256k1" : "libsecp256k1 (SKIPPED: library not installed)";
const nativeTest = native ? test : test.skip;
if (!native)
  console.log(
    "libsecp256k1 tests skipped: the library is missing; install it with: sudo apt-get install -y libsecp256k1-1 (.ci/run does)",
  );
const hex = (s: string) => Buffer.from(s, "hex");

describe.each([
  ["noble", nobleBackend as SchnorrBackend | undefined, test],
  [NATIVE, native, nativeTest],
] as const)("%s", (_name, backend, it) => {
  for (const v of BIP340_VECTORS) {
    it(`BIP-340 vector ${v.index} is ${v.valid ? "valid" : `invalid (${v.comment})`}`, () => {
      expect(backend!.verify(hex(v.signature), hex(v.message), hex(v.pubkey))).toBe(v.valid);
    });
  }

  it("returns false, never throws, on wrong lengths and non-bytes", () => {
    const v = BIP340_VECTORS[1]!;
    const [sig, msg, pub] = [hex(v.signature), hex(v.message), hex(v.pubkey)];
    expect(backend!.verify(sig.subarray(1), msg, pub)).toBe(false);
    expect(backend!.verify(sig, msg.subarray(1), pub)).toBe(false);
    expect(backend!.verify(sig, msg, pub.subarray(1))).toBe(false);
    expect(backend!.verify(new Uint8Array(0), new Uint8Array(0), new Uint8Array(0))).toBe(false);
    expect(backend!.verify(null as unknown as Uint8Array, msg, pub)).toBe(false);
    // The valid inputs still verify afterwards: no state left behind by the failures.
    expect(backend!.verify(sig, msg, pub)).toBe(true);
  });
});

describe("backends agree on nostr events", () => {
  const cases = mixedCases(signedEvents(12));

  test("noble gives the expected verdict for every case", () => {
    for (const c of cases)
      expect([c.label, verifyEvent(c.event, nobleBackend)]).toEqual([c.label, c.expected]);
  });

  nativeTest(`${NATIVE} gives the same verdict as noble for every case`, () => {
    for (const c of cases) expect([c.label, verifyEvent(c.event, native!)]).toEqual([c.label, c.expected]);
  });

  nativeTest(`${NATIVE} rejects a pubkey that is not on the curve without aborting`, () => {
    const v = BIP340_VECTORS[5]!;
    for (let i = 0; i < 100; i++)
      expect(native!.verify(hex(v.signature), hex(v.message), hex(v.pubkey))).toBe(false);
  });
});

describe("libsecp256k1's cache of parsed keys", () => {
  // Keys that differ only in their last byte share a cache slot (it is chosen by the first bytes).
  const v = BIP340_VECTORS[1]!;
  const [sig, msg, pub] = [hex(v.signature), hex(v.message), hex(v.pubkey)];
  const variant = (onCurve: boolean): Buffer => {
    for (let b = 0; b < 256; b++) {
      const k = Buffer.from(pub);
      k[31] = b;
      if (k.equals(pub)) continue;
      let ok = true;
      try {
        secp256k1.Point.fromHex(`02${k.toString("hex")}`);
      } catch {
        ok = false;
      }
      if (ok === onCurve) return k;
    }
    throw new Error("no variant found");
  };

  nativeTest(`${NATIVE}: another key or an invalid one in the same slot never answers for the first`, () => {
    const other = variant(true);
    const invalid = variant(false);
    for (let round = 0; round < 3; round++) {
      expect(native!.verify(sig, msg, pub)).toBe(true);
      expect(native!.verify(sig, msg, other)).toBe(false);
      expect(native!.verify(sig, msg, pub)).toBe(true);
      expect(native!.verify(sig, msg, invalid)).toBe(false);
      expect(native!.verify(sig, msg, invalid)).toBe(false);
      expect(native!.verify(sig, msg, pub)).toBe(true);
    }
  });

  nativeTest(`${NATIVE}: many authors, each verified twice, get the same verdicts as noble`, () => {
    const cases = mixedCases(signedEvents(40));
    for (let pass = 0; pass < 2; pass++)
      for (const c of cases) expect([c.label, verifyEvent(c.event, native!)]).toEqual([c.label, c.expected]);
  });
});

describe("loading and choosing", () => {
  test("a bad configured path is reported and the usual locations are still tried", () => {
    const probe = probeNativeBackend("/nonexistent/libsecp256k1.so");
    expect(probe.errors[0]).toContain("/nonexistent/libsecp256k1.so");
    expect(probe.backend?.name).toBe(native?.name);
  });

  test("a library without the schnorrsig symbols is refused", () => {
    const libc = process.platform === "darwin" ? "/usr/lib/libSystem.B.dylib" : "libc.so.6";
    const probe = probeNativeBackend(libc);
    expect(probe.errors.join(" ")).toMatch(/secp256k1_/);
  });

  test("noble is chosen when configured", () => {
    expect(chooseBackend("noble").backend).toBe(nobleBackend);
  });

  test("auto picks libsecp256k1 when present, noble otherwise, and explains", () => {
    const { backend, reason } = chooseBackend("auto");
    expect(backend.name).toBe(native ? "libsecp256k1" : "noble");
    expect(reason).toContain(backend.name);
  });

  test("native throws when unavailable instead of silently falling back", () => {
    if (native) expect(chooseBackend("native").backend.name).toBe("libsecp256k1");
    else expect(() => chooseBackend("native")).toThrow(/native/);
  });
});
