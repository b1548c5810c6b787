// NIP-77 negentropy is not implemented yet: NEG-OPEN and NEG-MSG are answered NEG-ERR
// unsupported: at once, so clients fall back to REQ instead of waiting (nostr-tools waited
// forever on the NOTICE it got before); NEG-CLOSE of an unknown id gets no answer.
import { afterAll, describe, expect, test } from "bun:test";
import type { TestRelay } from "./harness.ts";
import { RawClient, startTestRelay } from "./harness.ts";

const relays: TestRelay[] = [];
const start = () => {
  const r = startTestRelay();
  relays.push(r);
  return r;
};
afterAll(async () => {
  for (const r of relays) await r.destroy();
});

describe("NIP-77 negentropy (not implemented)", () => {
  test("NEG-OPEN and NEG-MSG are answered NEG-ERR unsupported:, NEG-CLOSE of an unknown id not at all", async () => {
    const r = start();
    const c = await RawClient.connect(r.url);
    c.send(["NEG-OPEN", "neg1", { kinds: [1] }, "6100"]);
    const err = await c.next((f) => f[0] === "NEG-ERR");
    expect(err.slice(0, 2)).toEqual(["NEG-ERR", "neg1"]);
    expect(String(err[2])).toStartWith("unsupported: ");
    c.send(["NEG-MSG", "neg1", "6100"]);
    await c.next((f) => f[0] === "NEG-ERR" && f !== err);
    c.send(["NEG-CLOSE", "neg1"]);
    // Anything answered after NEG-CLOSE would come before this EOSE.
    expect(await c.req("after", { limit: 0 })).toEqual([]);
    expect(c.frames.map((f) => f[0])).toEqual(["NEG-ERR", "NEG-ERR", "EOSE"]);
    c.close();
  });

  test("a NEG-OPEN without a subscription id gets a NOTICE invalid:", async () => {
    const r = start();
    const c = await RawClient.connect(r.url);
    c.send(["NEG-OPEN", 5, {}, "6100"]);
    const notice = await c.next((f) => f[0] === "NOTICE");
    expect(String(notice[1])).toStartWith("invalid: ");
    c.close();
  });
});
