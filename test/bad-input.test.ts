// Bad input of every kind gets a clear answer (NOTICE, CLOSED or OK false) and the connection
// stays usable: malformed JSON, unknown verbs, wrong arity or types, bad filters, long ids,
// oversized frames.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay({ "limits.maxMessageBytes": "4096", "limits.maxFilterValues": "10" });
let c: RawClient;
beforeAll(async () => {
  c = await RawClient.connect(relay.url);
});
afterAll(() => {
  c.close();
});

/** Sends raw text and returns the next frame that answers it. */
async function answer(text: string): Promise<unknown[]> {
  const from = c.frames.length;
  c.send(text);
  return c.next(() => true, 5000, from);
}

async function stillWorks(): Promise<void> {
  const e = signed(newKey());
  expect(await c.publish(e)).toEqual(["OK", e.id, true, ""]);
}

describe("frames the relay cannot understand get a NOTICE", () => {
  const notices: [string, string][] = [
    ["malformed JSON", '["REQ", '],
    ["a JSON object instead of an array", '{"REQ":1}'],
    ["an empty array", "[]"],
    ["a verb that is not a string", "[1, 2]"],
    ["an unknown verb", '["HELLO", 1]'],
    ["a REQ without a subscription id", '["REQ"]'],
    ["a REQ whose subscription id is a number", '["REQ", 5, {}]'],
    ["a REQ whose subscription id is empty", '["REQ", "", {}]'],
    ["a subscription id longer than the limit", JSON.stringify(["REQ", "x".repeat(65), {}])],
    ["a CLOSE without an id", '["CLOSE"]'],
    ["a frame larger than max_message_length", JSON.stringify(["REQ", "big", { "#t": ["x".repeat(5000)] }])],
  ];
  for (const [what, text] of notices) {
    test(`${what}`, async () => {
      const f = await answer(text);
      expect(f[0]).toBe("NOTICE");
      expect(String(f[1])).toStartWith("invalid: ");
      await stillWorks();
    });
  }
});

describe("bad EVENT frames get OK false", () => {
  test("an EVENT whose payload is not an object has no id to answer, so it gets a NOTICE", async () => {
    const f = await answer('["EVENT", "nope"]');
    expect(f).toEqual(["NOTICE", 'invalid: EVENT must be ["EVENT", <event object>]']);
  });
  test("an EVENT with extra elements", async () => {
    const e = signed(newKey());
    const f = await answer(JSON.stringify(["EVENT", e, 1]));
    expect(f.slice(0, 3)).toEqual(["OK", e.id, false]);
  });
});

describe("bad filters close the subscription with CLOSED invalid:", () => {
  const closed: [string, unknown[]][] = [
    ["a REQ with no filter", []],
    ["a fractional limit", [{ limit: 1.5 }]],
    ["a negative limit", [{ limit: -1 }]],
    ["a string since", [{ since: "yesterday" }]],
    ["uppercase hex in authors", [{ authors: ["A".repeat(64)] }]],
    ["a short id", [{ ids: ["abcd"] }]],
    ["kinds that are not integers", [{ kinds: ["1"] }]],
    ["a kind out of range", [{ kinds: [70000] }]],
    ["a tag filter that is not an array", [{ "#e": "x" }]],
    ["a tag filter with numbers", [{ "#t": [1] }]],
    ["an unknown filter field", [{ foo: 1 }]],
    ["a multi-letter tag filter", [{ "#tag": ["x"] }]],
    ["more values than the limit", [{ kinds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }]],
    ["a filter that is not an object", [5]],
    ["more filters than the limit", Array.from({ length: 11 }, () => ({}))],
  ];
  for (const [what, filters] of closed) {
    test(`${what}`, async () => {
      const f = await answer(JSON.stringify(["REQ", "bad", ...filters]));
      expect(f[0]).toBe("CLOSED");
      expect(f[1]).toBe("bad");
      expect(String(f[2])).toStartWith("invalid: ");
      await stillWorks();
    });
  }

  test("a COUNT with a bad filter is answered CLOSED", async () => {
    const f = await answer(JSON.stringify(["COUNT", "cnt", { limit: "x" }]));
    expect(f.slice(0, 2)).toEqual(["CLOSED", "cnt"]);
  });

  test("a search that is not a string is refused (search itself: test/search.test.ts)", async () => {
    const f = await answer(JSON.stringify(["REQ", "s", { search: ["hello"] }]));
    expect(f[0]).toBe("CLOSED");
    expect(String(f[2])).toStartWith("invalid: ");
  });
});

describe("limits", () => {
  test("more open subscriptions than allowed are refused with CLOSED", async () => {
    const r = startTestRelay({ "limits.maxSubscriptions": "2" });
    const s = await RawClient.connect(r.url);
    await s.req("a", { limit: 0 });
    await s.req("b", { limit: 0 });
    s.send(["REQ", "c", { limit: 0 }]);
    const f = await s.next((f) => f[1] === "c");
    expect(f[0]).toBe("CLOSED");
    expect(String(f[2])).toStartWith("rate-limited: ");
    s.send(["CLOSE", "a"]);
    expect(await s.req("c", { limit: 0 })).toEqual([]);
    s.close();
    await r.destroy();
  });

  test("a frame far beyond the size limit closes the connection with 1009", async () => {
    const s = await RawClient.connect(relay.url);
    s.send(JSON.stringify(["EVENT", { content: "x".repeat(4096 * 5) }]));
    for (let i = 0; i < 100 && !s.closed; i++) await Bun.sleep(10);
    expect(s.closed?.code).toBe(1009);
    await stillWorks();
  });

  test("a limit above max_limit is clamped", async () => {
    const r = startTestRelay({ "limits.maxLimit": "3", "limits.defaultLimit": "2" });
    const s = await RawClient.connect(r.url);
    const sk = newKey();
    for (let i = 0; i < 5; i++) await s.publish(signed(sk, { content: `${i}` }));
    expect((await s.req("big", { limit: 100 })).length).toBe(3);
    expect((await s.req("default", {})).length).toBe(2);
    s.close();
    await r.destroy();
  });
});
