// `relay keygen` run as a real process, checked against the test vectors published in NIP-06, with
// the exact exit codes and messages a script would see on bad input.
import { describe, expect, test } from "bun:test";
import { accountFromSeedWords, validateWords } from "nostr-tools/nip06";
import { getPublicKey } from "nostr-tools/pure";
import { cliSync } from "../procs.ts";

const relay = (...args: string[]) => cliSync(args);

/** A refusal is one line on stderr (never a stack trace), nothing on stdout, and status 2. */
function expectRefusal(r: ReturnType<typeof relay>, message: string): void {
  expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 2, out: "", err: `${message}\n` });
}

const NIP06 = [
  {
    mnemonic: "leader monkey parrot ring guide accident before fence cannon height naive bean",
    secret: "7f7ff03d123792d6ac594bfa67bf6d0c0ab55b6b1fdb6249303fe861f1ccba9a",
    nsec: "nsec10allq0gjx7fddtzef0ax00mdps9t2kmtrldkyjfs8l5xruwvh2dq0lhhkp",
    pubkey: "17162c921dc4d2518f9a101db33695df1afb56ab82f5ff3e5da6eec3ca5cd917",
    npub: "npub1zutzeysacnf9rru6zqwmxd54mud0k44tst6l70ja5mhv8jjumytsd2x7nu",
  },
  {
    mnemonic:
      "what bleak badge arrange retreat wolf trade produce cricket blur garlic valid proud rude strong choose busy staff weather area salt hollow arm fade",
    secret: "c15d739894c81a2fcfd3a2df85a0d2c0dbc47a280d092799f144d73d7ae78add",
    nsec: "nsec1c9wh8xy5eqdzln7n5t0ctgxjcrdug73gp5yj0x03gntn67h83twssdfhel",
    pubkey: "d41b22899549e1f3d335a31002cfd382174006e166d3e658e3a5eecdb6463573",
    npub: "npub16sdj9zv4f8sl85e45vgq9n7nsgt5qphpvmf7vk8r5hhvmdjxx4es8rq74h",
  },
];
const [V1, V2] = NIP06 as [(typeof NIP06)[0], (typeof NIP06)[0]];

function lines(v: (typeof NIP06)[0]): string {
  return `secret: ${v.secret}\npubkey: ${v.pubkey}\nnsec: ${v.nsec}\nnpub: ${v.npub}\nmnemonic: ${v.mnemonic}\n`;
}

describe("relay keygen", () => {
  for (const [i, v] of NIP06.entries()) {
    test(`NIP-06 test vector ${i + 1} derives the published secret key, pubkey, nsec and npub`, () => {
      const r = relay("keygen", "--mnemonic", v.mnemonic);
      expect({ code: r.code, out: r.out, err: r.err }).toEqual({ code: 0, out: lines(v), err: "" });
    });
  }

  test("--json prints the same keys as one JSON object", () => {
    const r = relay("keygen", "--json", "--mnemonic", V2.mnemonic);
    expect(r.code).toBe(0);
    const { secret, pubkey, nsec, npub, mnemonic } = V2;
    expect(r.out).toBe(`${JSON.stringify({ secret, pubkey, nsec, npub, mnemonic })}\n`);
  });

  test("the words may also be given one argument each, in any case and with stray whitespace", () => {
    const words = V1.mnemonic.toUpperCase().split(" ");
    words[3] = ` ${words[3]}\t`;
    const r = relay("keygen", "--mnemonic", ...words, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual(V1);
  });

  test("--account and --passphrase select a different key along m/44'/1237'/<account>'/0/0", () => {
    const r = relay(
      "keygen",
      "--mnemonic",
      V1.mnemonic,
      "--account",
      "1",
      "--passphrase",
      "TREZOR",
      "--json",
    );
    const expected = accountFromSeedWords(V1.mnemonic, "TREZOR", 1);
    const got = JSON.parse(r.out);
    expect(r.code).toBe(0);
    expect(got.secret).toBe(Buffer.from(expected.privateKey).toString("hex"));
    expect(got.pubkey).toBe(expected.publicKey);
    expect(got.pubkey).not.toBe(V1.pubkey);
    expect(got.mnemonic).toBe(V1.mnemonic);
  });

  test("account 0 is the default", () => {
    expect(relay("keygen", "--mnemonic", V1.mnemonic, "--account", "0").out).toBe(lines(V1));
  });

  test("without options a fresh random key pair is printed, with nsec and npub that decode back to it", () => {
    const a = relay("keygen", "--json");
    const b = relay("keygen", "--json");
    const keys = JSON.parse(a.out);
    expect(a.code).toBe(0);
    expect(Object.keys(keys)).toEqual(["secret", "pubkey", "nsec", "npub"]);
    expect(keys.pubkey).toBe(getPublicKey(Buffer.from(keys.secret, "hex")));
    expect(JSON.parse(relay("nip19", "decode", keys.nsec).out)).toEqual({ type: "nsec", data: keys.secret });
    expect(JSON.parse(relay("nip19", "decode", keys.npub).out)).toEqual({ type: "npub", data: keys.pubkey });
    expect(JSON.parse(b.out).secret).not.toBe(keys.secret);
  });

  test("--mnemonic alone makes a new valid 12-word mnemonic that derives the printed keys", () => {
    const r = relay("keygen", "--mnemonic");
    expect(r.code).toBe(0);
    const fields = Object.fromEntries(
      r.out
        .trim()
        .split("\n")
        .map((l) => l.split(": ") as [string, string]),
    );
    expect(Object.keys(fields)).toEqual(["secret", "pubkey", "nsec", "npub", "mnemonic"]);
    expect(fields.mnemonic!.split(" ")).toHaveLength(12);
    expect(validateWords(fields.mnemonic!)).toBe(true);
    expect(relay("keygen", "--mnemonic", fields.mnemonic!).out).toBe(r.out);
  });

  test("a mnemonic with a bad checksum is refused with status 2", () => {
    const bad = V1.mnemonic.replace(/bean$/, "beach");
    expectRefusal(
      relay("keygen", "--mnemonic", bad),
      "relay keygen: invalid mnemonic: a word is not in the BIP-39 English list or the checksum is wrong",
    );
  });

  test("a mnemonic with a word outside the English list is refused with status 2", () => {
    const bad = V1.mnemonic.replace("monkey", "monkee");
    expectRefusal(
      relay("keygen", "--mnemonic", bad),
      "relay keygen: invalid mnemonic: a word is not in the BIP-39 English list or the checksum is wrong",
    );
  });

  test("a mnemonic of the wrong length is refused with status 2", () => {
    const bad = V1.mnemonic.split(" ").slice(0, 11).join(" ");
    expectRefusal(
      relay("keygen", "--mnemonic", bad),
      "relay keygen: invalid mnemonic: 11 words; BIP-39 uses 12, 15, 18, 21 or 24",
    );
  });

  test("an empty quoted mnemonic is refused rather than replaced by new words", () => {
    expectRefusal(relay("keygen", "--mnemonic", ""), "relay keygen: --mnemonic was given empty words");
  });

  test("--account without --mnemonic, a bad account and a stray argument are refused with status 2", () => {
    expectRefusal(relay("keygen", "--account", "1"), "relay keygen: --account needs --mnemonic");
    expectRefusal(
      relay("keygen", "--mnemonic", V1.mnemonic, "--account", "2147483648"),
      "relay keygen: --account must be an integer from 0 to 2147483647, got '2147483648'",
    );
    expectRefusal(relay("keygen", "--bogus", "1"), "relay keygen: unexpected argument --bogus");
  });
});
