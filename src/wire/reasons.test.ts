import { expect, test } from "bun:test";
import {
  ALREADY_HAVE,
  authRequired,
  blocked,
  closed,
  duplicate,
  error,
  invalid,
  isReject,
  mute,
  olderVersion,
  pow,
  rateLimited,
  reasonText,
  restricted,
  unsupported,
} from "./reasons.ts";

test("each maker gives its NIP-01 prefix, written `prefix: message`", () => {
  const made = [
    invalid,
    duplicate,
    blocked,
    rateLimited,
    restricted,
    authRequired,
    pow,
    mute,
    error,
    unsupported,
    closed,
  ].map((m) => reasonText(m("why")));
  expect(made).toEqual([
    "invalid: why",
    "duplicate: why",
    "blocked: why",
    "rate-limited: why",
    "restricted: why",
    "auth-required: why",
    "pow: why",
    "mute: why",
    "error: why",
    "unsupported: why",
    "closed: why",
  ]);
});

test("isReject tells a Reject from anything else", () => {
  expect(isReject(invalid("x"))).toBe(true);
  expect(isReject({ reject: true, prefix: "invalid", message: "x" })).toBe(true);
  for (const x of [null, undefined, "invalid: x", { prefix: "invalid" }, { reject: "true" }, 0])
    expect(isReject(x)).toBe(false);
});

test("the unclear cases are decided with standard prefixes", () => {
  expect(ALREADY_HAVE).toBe("duplicate: already have this event");
  expect(reasonText(olderVersion())).toBe("duplicate: have a newer version of this replaceable event");
});
