import { describe, expect, test } from "bun:test";
import {
  authFrame,
  closedFrame,
  countFrame,
  eoseFrame,
  eventFrame,
  eventPrefix,
  negErrFrame,
  negMsgFrame,
  noticeFrame,
  okFrame,
  okReject,
} from "./frames.ts";
import { blocked, closed, invalid, rateLimited } from "./reasons.ts";

const STORED = '{"id":"aa","kind":1,"content":"x"}';

describe("relay-to-client frames", () => {
  test("an EVENT frame is the subscription's prefix and the stored JSON verbatim", () => {
    const prefix = eventPrefix('sub "1"');
    expect(prefix).toBe('["EVENT","sub \\"1\\"",');
    expect(eventFrame(prefix, STORED)).toBe(`["EVENT","sub \\"1\\"",${STORED}]`);
    expect(JSON.parse(eventFrame(prefix, STORED))).toEqual(["EVENT", 'sub "1"', JSON.parse(STORED)]);
  });

  test("OK frames carry the id, the verdict and the message; a refusal its prefix", () => {
    expect(okFrame("ab", true, "")).toBe('["OK","ab",true,""]');
    expect(okFrame("ab", true, "duplicate: already have this event")).toBe(
      '["OK","ab",true,"duplicate: already have this event"]',
    );
    expect(okReject("ab", invalid('bad "tag"'))).toBe('["OK","ab",false,"invalid: bad \\"tag\\""]');
  });

  test("EOSE, CLOSED, NOTICE and AUTH", () => {
    expect(eoseFrame("s")).toBe('["EOSE","s"]');
    expect(closedFrame("s", rateLimited("slow down"))).toBe('["CLOSED","s","rate-limited: slow down"]');
    expect(noticeFrame("line\nbreak")).toBe('["NOTICE","line\\nbreak"]');
    expect(authFrame("c0ffee")).toBe('["AUTH","c0ffee"]');
  });

  test("COUNT: exact, approximate, and with HyperLogLog registers", () => {
    expect(countFrame("c", 42)).toBe('["COUNT","c",{"count":42}]');
    expect(countFrame("c", 42, true)).toBe('["COUNT","c",{"count":42,"approximate":true}]');
    expect(countFrame("c", 3, false, "00ff")).toBe('["COUNT","c",{"count":3,"hll":"00ff"}]');
    expect(JSON.parse(countFrame("c", 3, true, "00ff"))).toEqual([
      "COUNT",
      "c",
      { count: 3, approximate: true, hll: "00ff" },
    ]);
  });

  test("NIP-77: NEG-MSG carries the hex message, NEG-ERR a reason", () => {
    expect(negMsgFrame("n", "61")).toBe('["NEG-MSG","n","61"]');
    expect(negErrFrame("n", blocked("too many items"))).toBe('["NEG-ERR","n","blocked: too many items"]');
    expect(negErrFrame("n", closed("timed out"))).toBe('["NEG-ERR","n","closed: timed out"]');
  });
});
