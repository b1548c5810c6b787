// The explorer's NIP-19 handling (src/explorer/client/nostr/entities.ts): what a pasted string names,
// with or without `nostr:`, and the route that shows it. nrelay is checked against the CLI's.
import { describe, expect, test } from "bun:test";
import * as nip19 from "nostr-tools/nip19";
import {
  decodeEntity,
  eventIdOf,
  nrelayEncode,
  pubkeyOf,
  relayHref,
  routeOf,
} from "../../src/explorer/client/nostr/entities.ts";
import { cliSync } from "../procs.ts";

// From NIP-19's own examples.
const NPUB = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg";
const PK = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e";
const NSEC = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5";
const NPROFILE =
  "nprofile1qqsrhuxx8l9ex335q7he0f09aej04zpazpl0ne2cgukyawd24mayt8gpp4mhxue69uhhytnc9e3k7mgpz4mhxue69uhkg6nzv9ejuumpv34kytnrdaksjlyr9p";
const ID = "d".repeat(64);

describe("decodeEntity", () => {
  test("an npub, with or without nostr:, in upper case too", () => {
    for (const s of [NPUB, `nostr:${NPUB}`, `  ${NPUB}\n`, NPUB.toUpperCase(), `NOSTR:${NPUB.toUpperCase()}`])
      expect(decodeEntity(s)).toEqual({ type: "npub", pubkey: PK });
    expect(routeOf(decodeEntity(NPUB))).toBe(`#/p/${NPUB}`);
  });

  test("mixed case is refused, as bech32 requires", () => {
    expect(decodeEntity(`npub1${NPUB.slice(5, 20).toUpperCase()}${NPUB.slice(20)}`).type).toBe("error");
  });

  test("an nprofile names the pubkey and its relays and opens the npub's profile", () => {
    const d = decodeEntity(NPROFILE);
    expect(d).toEqual({
      type: "nprofile",
      pubkey: "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d",
      relays: ["wss://r.x.com", "wss://djbas.sadkb.com"],
    });
    expect(routeOf(d)).toBe(
      `#/p/${nip19.npubEncode("3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d")}`,
    );
  });

  test("note and nevent open the event by id", () => {
    expect(decodeEntity(nip19.noteEncode(ID))).toEqual({ type: "note", id: ID });
    const nevent = nip19.neventEncode({ id: ID, relays: ["wss://a.example"], author: PK, kind: 1 });
    expect(decodeEntity(`nostr:${nevent}`)).toEqual({
      type: "nevent",
      id: ID,
      relays: ["wss://a.example"],
      author: PK,
      kind: 1,
    });
    expect(routeOf(decodeEntity(nevent))).toBe(`#/e/${ID}`);
  });

  test("an naddr keeps kind, author and identifier for the address route", () => {
    const naddr = nip19.naddrEncode({ kind: 30023, pubkey: PK, identifier: "my article", relays: [] });
    const d = decodeEntity(naddr);
    expect(d).toEqual({ type: "naddr", kind: 30023, pubkey: PK, identifier: "my article", relays: [] });
    expect(routeOf(d)).toBe(`#/a/${naddr}`);
  });

  test("an nsec is recognised and its key is not returned", () => {
    expect(decodeEntity(NSEC)).toEqual({ type: "nsec" });
    expect(routeOf(decodeEntity(NSEC))).toBeUndefined();
  });

  test("garbage and bad checksums are errors", () => {
    for (const s of ["", "hello", `${NPUB.slice(0, -1)}q`, "npub1", "nrelay1qqqqqq"])
      expect(decodeEntity(s).type).toBe("error");
  });
});

describe("nrelay", () => {
  test("encodes as `relay nip19 encode nrelay` does and decodes back", () => {
    const url = "wss://relay.example.com";
    const cli = cliSync(["nip19", "encode", "nrelay", url]);
    const encoded = nrelayEncode(url);
    expect(cli.out.trim()).toBe(encoded);
    expect(decodeEntity(encoded)).toEqual({ type: "nrelay", url });
    expect(decodeEntity(`nostr:${encoded}`)).toEqual({ type: "nrelay", url });
  });

  test("a relay links to its own page over http(s), and nothing else is linked", () => {
    expect(relayHref("wss://relay.example.com")).toBe("https://relay.example.com");
    expect(relayHref("ws://127.0.0.1:7777/")).toBe("http://127.0.0.1:7777/");
    expect(relayHref("javascript:alert(1)")).toBeUndefined();
    expect(relayHref("https://x.example")).toBeUndefined();
  });
});

describe("route segments", () => {
  test("a profile route takes npub, nprofile or hex", () => {
    expect(pubkeyOf(NPUB)).toBe(PK);
    expect(pubkeyOf(PK)).toBe(PK);
    expect(pubkeyOf(NPROFILE)).toBe("3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d");
    expect(pubkeyOf(nip19.noteEncode(ID))).toBeUndefined();
  });

  test("an event route takes note, nevent or hex", () => {
    expect(eventIdOf(ID)).toBe(ID);
    expect(eventIdOf(nip19.noteEncode(ID))).toBe(ID);
    expect(eventIdOf(nip19.neventEncode({ id: ID }))).toBe(ID);
    expect(eventIdOf(NPUB)).toBeUndefined();
  });
});
