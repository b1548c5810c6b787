// `relay nip19` run as a real process, checked against the examples published in NIP-19, with the
// exact exit codes and messages a script would see on bad input.
import { describe, expect, test } from "bun:test";
import { cliSync } from "../procs.ts";

const relay = (...args: string[]) => cliSync(args);

/** A refusal is one line on stderr (never a stack trace), nothing on stdout, and status 2. */
function expectRefusal(r: ReturnType<typeof relay>, message: string): void {
  expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 2, out: "", err: `${message}\n` });
}

const NPROFILE =
  "nprofile1qqsrhuxx8l9ex335q7he0f09aej04zpazpl0ne2cgukyawd24mayt8gpp4mhxue69uhhytnc9e3k7mgpz4mhxue69uhkg6nzv9ejuumpv34kytnrdaksjlyr9p";
const PK = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d";
const PK2 = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e";
const NIP19_BARE: [type: string, hex: string, bech32: string][] = [
  ["npub", PK, "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6"],
  ["npub", PK2, "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"],
  [
    "nsec",
    "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa",
    "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5",
  ],
];

function ok(r: ReturnType<typeof relay>): string {
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
  return r.out.trim();
}

describe("relay nip19", () => {
  for (const [type, hex, code] of NIP19_BARE) {
    test(`the NIP-19 ${type} example encodes from hex and decodes back to it`, () => {
      expect(ok(relay("nip19", "encode", type, hex))).toBe(code);
      expect(ok(relay("nip19", "decode", code))).toBe(JSON.stringify({ type, data: hex }));
    });
  }

  test("the NIP-19 nprofile example is reproduced exactly from its pubkey and two relays", () => {
    const r = relay(
      "nip19",
      "encode",
      "nprofile",
      PK,
      "--relay",
      "wss://r.x.com",
      "--relay=wss://djbas.sadkb.com",
    );
    expect(ok(r)).toBe(NPROFILE);
  });

  test("the NIP-19 nprofile example decodes to its pubkey and both relays, also behind nostr:", () => {
    const want = {
      type: "nprofile",
      data: { pubkey: PK, relays: ["wss://r.x.com", "wss://djbas.sadkb.com"] },
    };
    expect(JSON.parse(ok(relay("nip19", "decode", NPROFILE)))).toEqual(want);
    expect(JSON.parse(ok(relay("nip19", "decode", `nostr:${NPROFILE}`)))).toEqual(want);
  });

  test("a note id encodes to note1 and back", () => {
    const code = ok(relay("nip19", "encode", "note", PK2));
    expect(code).toStartWith("note1");
    expect(JSON.parse(ok(relay("nip19", "decode", code)))).toEqual({ type: "note", data: PK2 });
  });

  test("an nevent keeps its id, relays, author and kind through encode and decode", () => {
    const args = ["--relay", "wss://a.example", "--author", PK2, "--kind", "30023"];
    const code = ok(relay("nip19", "encode", "nevent", PK, ...args));
    expect(JSON.parse(ok(relay("nip19", "decode", code)))).toEqual({
      type: "nevent",
      data: { id: PK, relays: ["wss://a.example"], author: PK2, kind: 30023 },
    });
  });

  test("an naddr keeps its identifier, author, kind and relays, and --pubkey names the author too", () => {
    const args = ["--identifier", "héllo", "--kind", "30023", "--relay", "wss://a.example"];
    const code = ok(relay("nip19", "encode", "naddr", "--author", PK, ...args));
    expect(ok(relay("nip19", "encode", "naddr", "--pubkey", PK, ...args))).toBe(code);
    expect(JSON.parse(ok(relay("nip19", "decode", code)))).toEqual({
      type: "naddr",
      data: { identifier: "héllo", pubkey: PK, kind: 30023, relays: ["wss://a.example"] },
    });
  });

  test("an nrelay, which nostr-tools no longer encodes, round-trips its URL", () => {
    const code = ok(relay("nip19", "encode", "nrelay", "wss://relay.example.com"));
    expect(code).toStartWith("nrelay1");
    expect(ok(relay("nip19", "decode", code))).toBe(
      JSON.stringify({ type: "nrelay", data: "wss://relay.example.com" }),
    );
  });

  test("a mistyped bech32 string is refused for its checksum with status 2", () => {
    const typo = "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w7";
    expectRefusal(
      relay("nip19", "decode", typo),
      `relay nip19: '${typo}' has a bad bech32 checksum (mistyped?)`,
    );
  });

  test("something that is not bech32 at all is refused with status 2", () => {
    const r = relay("nip19", "decode", "not-bech32");
    expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: "" });
    expect(r.err).toStartWith("relay nip19: 'not-bech32' is not bech32: ");
    expect(r.err.trim().split("\n")).toHaveLength(1);
  });

  test("a valid bech32 string of a type NIP-19 does not define is refused with status 2", () => {
    expectRefusal(
      relay("nip19", "decode", "ncryptsec1qq5qzkgudk2"),
      "relay nip19: unknown NIP-19 type 'ncryptsec'; known: npub, nsec, note, nrelay, nprofile, nevent, naddr",
    );
  });

  test("an npub that holds 31 bytes instead of 32 is refused with status 2", () => {
    expectRefusal(
      relay("nip19", "decode", "npub1qurswpc8qurswpc8qurswpc8qurswpc8qurswpc8qurswpc8quckmx97"),
      "relay nip19: invalid npub: 31 bytes, expected 32",
    );
  });

  test("an nprofile whose TLV is cut short is refused with status 2", () => {
    expectRefusal(
      relay("nip19", "decode", "nprofile1qq5qzc9uvyh"),
      "relay nip19: invalid nprofile: not enough data to read on TLV 0",
    );
  });

  test("encoding an unknown type is refused with status 2", () => {
    expectRefusal(
      relay("nip19", "encode", "nkey", PK),
      "relay nip19: unknown type 'nkey'; one of npub, nsec, note, nrelay, nprofile, nevent, naddr",
    );
  });

  test("encoding hex of the wrong length is refused with status 2", () => {
    expectRefusal(
      relay("nip19", "encode", "npub", "abc"),
      "relay nip19: pubkey must be 64 hex characters, got 'abc'",
    );
  });

  test("options that the type does not take are refused rather than ignored", () => {
    expectRefusal(
      relay("nip19", "encode", "npub", PK, "--relay", "wss://a.example"),
      "relay nip19: npub takes no --relay",
    );
    expectRefusal(
      relay("nip19", "encode", "nprofile", PK, "--kind", "1"),
      "relay nip19: nprofile takes no --kind",
    );
  });

  test("an naddr without an author, a negative kind and a non-websocket relay are refused with status 2", () => {
    expectRefusal(
      relay("nip19", "encode", "naddr", "--identifier", "x", "--kind", "1"),
      "relay nip19: naddr needs --author (hex pubkey)",
    );
    expectRefusal(
      relay("nip19", "encode", "nevent", PK, "--kind", "-1"),
      "relay nip19: --kind must be an integer from 0 to 4294967295, got '-1'",
    );
    expectRefusal(
      relay("nip19", "encode", "nrelay", "https://a.example"),
      "relay nip19: relay URL must start with ws:// or wss://, got 'https://a.example'",
    );
  });

  test("a relay URL longer than one TLV can hold is refused instead of being corrupted", () => {
    const long = `wss://${"a".repeat(250)}.example`;
    expectRefusal(
      relay("nip19", "encode", "nprofile", PK, "--relay", long),
      "relay nip19: a nprofile field is 264 bytes; at most 255 fit",
    );
  });
});
