// rust-nostr's JavaScript build (@rust-nostr/nostr-sdk, WASM) against the relay: a Client fetch
// with default settings, and a Client that authenticates (NIP-42) by itself and publishes where
// auth.writes is on. The WASM module loads under Bun as it does in browsers (loadWasmAsync).
import { beforeAll, expect, test } from "bun:test";
import {
  Client,
  Duration,
  EventBuilder,
  Filter,
  Keys,
  Kind,
  loadWasmAsync,
  NostrSigner,
} from "@rust-nostr/nostr-sdk";
import { cleanup, newKey, RawClient, signed, startTestRelay } from "../harness.ts";

beforeAll(async () => {
  await loadWasmAsync();
});

async function connected(url: string, keys = Keys.generate()): Promise<Client> {
  const client = new Client(NostrSigner.keys(keys));
  cleanup(() => client.disconnect());
  await client.addRelay(url);
  await client.connect();
  return client;
}

test("a rust-nostr Client fetch gets the stored events from a relay with default settings", async () => {
  const r = startTestRelay();
  const pub = await RawClient.connect(r.url);
  const notes = [signed(newKey(), { content: "one" }), signed(newKey(), { content: "two" })];
  for (const n of notes) expect((await pub.publish(n))[2]).toBe(true);
  pub.close();
  const client = await connected(r.url);
  // fetchEvents returns at EOSE; the generous timeout only bounds a relay that never sends it.
  const events = await client.fetchEvents(new Filter().kind(new Kind(1)), Duration.fromSecs(30));
  expect(
    events
      .toVec()
      .map((e) => e.id.toHex())
      .sort(),
  ).toEqual(notes.map((n) => n.id).sort());
});

test("with auth.writes, a rust-nostr Client authenticates by itself and its event is stored", async () => {
  const r = startTestRelay({ "auth.writes": "true" });
  const keys = Keys.generate();
  const client = await connected(r.url, keys);
  const out = await client.sendEventBuilder(EventBuilder.textNote("from rust-nostr"));
  expect(out.failed.map((f) => `${f.url}: ${f.error}`)).toEqual([]);
  expect(out.success).toEqual([r.url]);
  const pubkey = keys.publicKey.toHex();
  expect([...r.conns].some((c) => c.authed.has(pubkey))).toBe(true);
  const reader = await RawClient.connect(r.url);
  expect(await reader.req("mine", { authors: [pubkey] })).toEqual([out.id.toHex()]);
  reader.close();
});
