// NIP-45 HyperLogLog: 256 one-byte registers fed with the pubkeys of the counted events, so
// counts from several relays can be merged (register-wise max) without double counting.
//
// For a filter whose first tag condition's first value is V:
//   offset = (hex digit at position 32 of H) + 8, in 8..23, where H is V itself when V is 64-char
//            lowercase hex, the pubkey part of V when V is an address `kind:<pubkey>:d`, and
//            otherwise the hex sha256 of V (UTF-8);
// and for each counted event with pubkey P (32 bytes):
//   register index ri = P[offset];
//   rho = 1 + the number of leading zero bits of P[offset+1 .. offset+7] (at most 57);
//   registers[ri] = max(registers[ri], rho).
// The answer is the 256 registers as 512 lowercase hex characters.

import { isHex64 } from "../nostr/event.ts";

export const REGISTERS = 256;

/** The NIP-45 offset for a filter whose first tag value is `value`. */
export function hllOffset(value: string): number {
  let hex = value;
  if (!isHex64(hex)) {
    const parts = value.split(":");
    hex =
      parts.length === 3 && isHex64(parts[1])
        ? parts[1]!
        : new Bun.CryptoHasher("sha256").update(value).digest("hex");
  }
  return Number.parseInt(hex[32]!, 16) + 8;
}

const nibble = (c: number): number => (c <= 57 ? c - 48 : c - 87);

/** One byte of a lowercase-hex string, `byte` bytes after character position `at`. */
const hexByte = (s: string, at: number, byte: number): number =>
  (nibble(s.charCodeAt(at + 2 * byte)) << 4) | nibble(s.charCodeAt(at + 2 * byte + 1));

/** The register a pubkey (64-char lowercase hex at `at` of `s`) sets for `offset`, and its value. */
export function registerOf(s: string, offset: number, at = 0): { ri: number; rho: number } {
  const ri = hexByte(s, at, offset);
  let zeros = 0;
  for (let i = offset + 1; i < offset + 8; i++) {
    const b = hexByte(s, at, i);
    if (b === 0) {
      zeros += 8;
      continue;
    }
    zeros += Math.clz32(b) - 24;
    break;
  }
  return { ri, rho: zeros + 1 };
}

export class Hll {
  readonly registers = new Uint8Array(REGISTERS);

  constructor(readonly offset: number) {
    if (!Number.isInteger(offset) || offset < 0 || offset > 24) throw new Error(`invalid offset ${offset}`);
  }

  /** Feeds the 64-char lowercase hex pubkey found at character `at` of `s` (default: s is it). */
  add(s: string, at = 0): void {
    const r = registerOf(s, this.offset, at);
    if (r.rho > this.registers[r.ri]!) this.registers[r.ri] = r.rho;
  }

  hex(): string {
    return Buffer.from(this.registers).toString("hex");
  }
}
