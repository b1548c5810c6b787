import { describe, expect, test } from "bun:test";
import { invalid } from "../wire/reasons.ts";
import type { GateLimits } from "./messages.ts";
import { readFrame } from "./messages.ts";

const LIM: GateLimits = { maxMessageBytes: 1000, maxSubidLength: 8, maxFilters: 2 };
const read = (frame: unknown, lim = LIM) => {
  const text = typeof frame === "string" ? frame : JSON.stringify(frame);
  return readFrame(text, Buffer.byteLength(text), lim);
};

describe("readFrame: what every frame must be", () => {
  test("larger than maxMessageBytes, not JSON, not an array with a verb, an unknown verb", () => {
    expect(read(["REQ", "s", {}], { ...LIM, maxMessageBytes: 5 })).toEqual({
      type: "unreadable",
      reason: invalid("message is larger than 5 bytes"),
    });
    expect(read('["REQ",')).toEqual({ type: "unreadable", reason: invalid("message is not valid JSON") });
    for (const f of [{ a: 1 }, [], [1, "s"], 5, '"REQ"'])
      expect(read(f)).toEqual({
        type: "unreadable",
        reason: invalid("message must be a JSON array whose first element is a verb"),
      });
    expect(read(["PING", 1])).toEqual({ type: "unreadable", reason: invalid('unknown message type "PING"') });
    expect(read([`${"X".repeat(40)}`])).toEqual({
      type: "unreadable",
      reason: invalid(`unknown message type "${"X".repeat(32)}"`),
    });
  });
});

describe("EVENT and AUTH", () => {
  test("carry one event object", () => {
    expect(read(["EVENT", { id: "ab" }])).toEqual({ type: "EVENT", event: { id: "ab" } });
    expect(read(["AUTH", { kind: 22242 }])).toEqual({ type: "AUTH", event: { kind: 22242 } });
  });

  test("anything else is unreadable, with the event id when one can be read (for an OK)", () => {
    expect(read(["EVENT", { id: "ab" }, "extra"])).toEqual({
      type: "unreadable",
      reason: invalid('EVENT must be ["EVENT", <event object>]'),
      eventId: "ab",
    });
    for (const f of [["EVENT"], ["EVENT", null], ["EVENT", [1]], ["EVENT", "x"]])
      expect(read(f)).toEqual({
        type: "unreadable",
        reason: invalid('EVENT must be ["EVENT", <event object>]'),
        eventId: undefined,
      });
    expect(read(["AUTH", 5])).toEqual({
      type: "unreadable",
      reason: invalid('AUTH must be ["AUTH", <event object>]'),
      eventId: undefined,
    });
  });
});

describe("REQ, COUNT and CLOSE", () => {
  test("a REQ or COUNT is a subscription id and one filter or more, up to maxFilters", () => {
    expect(read(["REQ", "s", { kinds: [1] }])).toEqual({
      type: "REQ",
      subId: "s",
      filters: [{ kinds: [1] }],
    });
    expect(read(["COUNT", "c", {}, {}])).toEqual({ type: "COUNT", subId: "c", filters: [{}, {}] });
  });

  test("a bad subscription id gets a NOTICE; a bad filter count a CLOSED (the id is known)", () => {
    for (const id of ["", 5, undefined])
      expect(read(["REQ", id, {}])).toEqual({
        type: "unreadable",
        reason: invalid("REQ needs a non-empty subscription id string"),
      });
    expect(read(["COUNT", "123456789", {}])).toEqual({
      type: "unreadable",
      reason: invalid("subscription id is longer than 8 characters"),
    });
    expect(read(["REQ", "s"])).toEqual({
      type: "unreadable",
      reason: invalid("REQ needs at least one filter"),
      subId: "s",
    });
    expect(read(["REQ", "s", {}, {}, {}])).toEqual({
      type: "unreadable",
      reason: invalid("more than 2 filters"),
      subId: "s",
    });
  });

  test("CLOSE takes exactly a subscription id", () => {
    expect(read(["CLOSE", "s"])).toEqual({ type: "CLOSE", subId: "s" });
    for (const f of [["CLOSE"], ["CLOSE", 1], ["CLOSE", "s", "t"]])
      expect(read(f)).toEqual({
        type: "unreadable",
        reason: invalid('CLOSE must be ["CLOSE", <subscription id>]'),
      });
  });
});

describe("NIP-77 NEG-OPEN, NEG-MSG, NEG-CLOSE", () => {
  test("well formed", () => {
    expect(read(["NEG-OPEN", "n", { kinds: [1] }, "61"])).toEqual({
      type: "NEG-OPEN",
      subId: "n",
      filter: { kinds: [1] },
      message: "61",
    });
    expect(read(["NEG-MSG", "n", "61"])).toEqual({ type: "NEG-MSG", subId: "n", message: "61" });
    expect(read(["NEG-CLOSE", "n"])).toEqual({ type: "NEG-CLOSE", subId: "n" });
  });

  test("malformed: a NEG-ERR answer where the id is known", () => {
    expect(read(["NEG-OPEN", "n", {}])).toEqual({
      type: "unreadable",
      reason: invalid('NEG-OPEN must be ["NEG-OPEN", <subscription id>, <filter>, <hex message>]'),
      negSubId: "n",
    });
    expect(read(["NEG-MSG", "n", 61])).toEqual({
      type: "unreadable",
      reason: invalid('NEG-MSG must be ["NEG-MSG", <subscription id>, <hex message>]'),
      negSubId: "n",
    });
    expect(read(["NEG-CLOSE", "n", "x"])).toEqual({
      type: "unreadable",
      reason: invalid('NEG-CLOSE must be ["NEG-CLOSE", <subscription id>]'),
    });
    expect(read(["NEG-MSG", "", "61"])).toEqual({
      type: "unreadable",
      reason: invalid("NEG-MSG needs a non-empty subscription id string"),
    });
    expect(read(["NEG-OPEN", "123456789", {}, "61"])).toEqual({
      type: "unreadable",
      reason: invalid("subscription id is longer than 8 characters"),
    });
  });
});
