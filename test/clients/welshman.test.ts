// @welshman/net (the networking of Coracle and Flotilla) against the relay with default
// settings: a request with no auth policy gets its events and its EOSE. welshman holds back every
// EOSE while a challenge it has not answered is pending, so a relay that challenges every
// connection serves such apps nothing.
import { expect, test } from "bun:test";
import { newKey, RawClient, signed, startTestRelay } from "../harness.ts";

// On import @welshman/util benchmarks proof of work in a Worker made from a blob URL that it
// revokes at once; Bun loads a Worker's URL later than browsers do, so the worker fails with
// "Blob URL is missing" and the unhandled rejection would fail this file. The benchmark only
// runs where Worker exists, and nothing here uses proof of work, so it is kept from starting.
const { request } = await (async () => {
  const worker = globalThis.Worker;
  Reflect.deleteProperty(globalThis, "Worker");
  try {
    return await import("@welshman/net");
  } finally {
    globalThis.Worker = worker;
  }
})();

test("a welshman request with no auth policy gets the stored events and EOSE", async () => {
  const r = startTestRelay();
  const pub = await RawClient.connect(r.url);
  const notes = [signed(newKey(), { content: "one" }), signed(newKey(), { content: "two" })];
  for (const n of notes) expect((await pub.publish(n))[2]).toBe(true);
  pub.close();
  let eose = 0;
  const got = await request({
    relays: [r.url],
    filters: [{ kinds: [1] }],
    autoClose: true,
    onEose: () => eose++,
  });
  expect(eose).toBe(1);
  expect(got.map((e) => e.id).sort()).toEqual(notes.map((n) => n.id).sort());
});
