// `relay admin` as operators run it: a real process calling a relay started in this process
// over HTTP, signing with the key from RELAY_NSEC or --nsec-file.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesToHex } from "@noble/hashes/utils.js";
import { noteEncode, npubEncode, nsecEncode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, RawClient, signed, startTestRelay, tempDir } from "../harness.ts";
import { cli } from "../procs.ts";

// Real servers and processes on a shared 2-core machine: wait generously, never on a clock.
setDefaultTimeout(60_000);

const SLOW = 60_000;

/** Runs the CLI without blocking this process, whose event loop serves the relay under test. */
const relay = (args: string[], env: Record<string, string> = {}) => cli(args, { env });

const admin = newKey();
const r = startTestRelay({ "management.admins": getPublicKey(admin) });
const http = r.url.replace("ws://", "http://");
const asAdmin = { RELAY_NSEC: nsecEncode(admin) };
const dir = tempDir("relay-admin-");

describe("relay admin", () => {
  test(
    "bans a pubkey given as npub and prints each result as one line of JSON",
    async () => {
      const spammer = newKey();
      const pk = getPublicKey(spammer);
      const c = await RawClient.connect(r.url);
      const e = signed(spammer);
      expect((await c.publish(e))[2]).toBe(true);
      expect(await relay(["admin", http, "banpubkey", npubEncode(pk), "spam"], asAdmin)).toEqual({
        code: 0,
        out: "true\n",
        err: "",
      });
      expect(await c.req("s", { ids: [e.id] })).toEqual([]);
      c.close();
      expect(await relay(["admin", r.url, "listbannedpubkeys"], asAdmin)).toEqual({
        code: 0,
        out: `${JSON.stringify([{ pubkey: pk, reason: "spam" }])}\n`,
        err: "",
      });
    },
    SLOW,
  );

  test(
    "signs with --nsec-file, sends kinds as numbers and notes as hex",
    async () => {
      const file = join(dir, "admin.nsec");
      writeFileSync(file, `${bytesToHex(admin)}\n`);
      expect(await relay(["admin", http, "allowkind", "1", "--nsec-file", file])).toEqual({
        code: 0,
        out: "true\n",
        err: "",
      });
      expect((await relay(["admin", http, "listallowedkinds", "--nsec-file", file])).out).toBe("[1]\n");
      const id = "d".repeat(64);
      expect((await relay(["admin", http, "banevent", noteEncode(id), "--nsec-file", file])).code).toBe(0);
      expect((await relay(["admin", http, "listbannedevents", "--nsec-file", file])).out).toBe(
        `${JSON.stringify([{ id }])}\n`,
      );
      expect(
        (await relay(["admin", http, "unbanevent", "--params", JSON.stringify([id]), "--nsec-file", file]))
          .code,
      ).toBe(0);
      expect((await relay(["admin", http, "disallowkind", "1", "--nsec-file", file])).code).toBe(0);
      expect((await relay(["admin", http, "listallowedkinds", "--nsec-file", file])).out).toBe("[]\n");
    },
    SLOW,
  );

  test(
    "a key that is not an admin, an unknown method and bad params exit 1 with the relay's error",
    async () => {
      const stranger = await relay(["admin", http, "supportedmethods"], { RELAY_NSEC: nsecEncode(newKey()) });
      expect(stranger).toEqual({
        code: 1,
        out: "",
        err: "relay admin: supportedmethods: this pubkey may not manage this relay (HTTP 401)\n",
      });
      const unknown = await relay(["admin", http, "frobnicate"], asAdmin);
      expect(unknown).toEqual({
        code: 1,
        out: "",
        err: "relay admin: frobnicate: unknown method 'frobnicate'; supportedmethods lists them (HTTP 200)\n",
      });
      const bad = await relay(["admin", http, "blockip", "not-an-ip"], asAdmin);
      expect(bad.code).toBe(1);
      expect(bad.err).toContain("IPv4 or IPv6 address");
    },
    SLOW,
  );

  test(
    "no key, a bad URL, no method, a kind that is no number, a bad note and a key flag exit 2",
    async () => {
      expect(await relay(["admin", http, "supportedmethods"])).toEqual({
        code: 2,
        out: "",
        err: "relay admin: no secret key: set RELAY_NSEC (nsec1... or hex) or give --nsec-file F\n",
      });
      expect((await relay(["admin", "ftp://x", "supportedmethods"], asAdmin)).code).toBe(2);
      expect((await relay(["admin", http], asAdmin)).code).toBe(2);
      expect((await relay(["admin", http, "allowkind", "one"], asAdmin)).code).toBe(2);
      expect((await relay(["admin", http, "banevent", "note1qqqq"], asAdmin)).code).toBe(2);
      expect((await relay(["admin", http, "supportedmethods", "--nsec", "x"], asAdmin)).code).toBe(2);
    },
    SLOW,
  );

  test(
    "a relay that cannot be reached exits 1",
    async () => {
      const gone = startTestRelay();
      const url = gone.url.replace("ws://", "http://");
      await gone.destroy();
      const got = await relay(["admin", url, "supportedmethods", "--timeout", "5"], asAdmin);
      expect(got.code).toBe(1);
      expect(got.err).toStartWith(`relay admin: ${url}/: `);
    },
    SLOW,
  );
});
