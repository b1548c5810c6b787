// The batch wire format and the worker pool: every verdict matches verifyEvent, in input order,
// whether events arrive as one batch, from many callers across flushes, or one at a time.
import { afterAll, describe, expect, test } from "bun:test";
import { mixedCases, signedEvents } from "../../test/fixtures/signed-events.ts";
import { packBatch, resultAt, verifyPacked } from "./batch.ts";
import { loadNativeBackend } from "./native.ts";
import { VerifyPool } from "./pool.ts";
import { nobleBackend } from "./verify.ts";

const native = loadNativeBackend();
const cases = mixedCases(signedEvents(20));
const events = cases.map((c) => c.event);
const expected = cases.map((c) => c.expected);

describe("packed batches (in-thread)", () => {
  test("verifyPacked answers every case like verifyEvent", () => {
    const { batch, slot } = packBatch(events);
    const n = batch.commitments.length;
    const answered = verifyPacked(batch, native ?? nobleBackend);
    expect(events.map((_, i) => resultAt(slot, answered, n, i))).toEqual(expected);
  });

  test("a batch of only malformed ids is decided without hashing", () => {
    const { batch, slot } = packBatch([{ ...events[0]!, id: "nope" }]);
    expect(batch.commitments).toHaveLength(0);
    expect(resultAt(slot, batch.buf, 0, 0)).toBe("bad-id");
  });
});

const pools: VerifyPool[] = [];
const open = (opts: ConstructorParameters<typeof VerifyPool>[0]) => {
  const p = new VerifyPool(opts);
  pools.push(p);
  return p;
};
afterAll(() => Promise.all(pools.map((p) => p.close())));

describe.each([
  ["noble", "noble" as const],
  [native ? "libsecp256k1" : "libsecp256k1 (falls back to noble: library not installed)", "auto" as const],
])("pool with %s", (_name, backend) => {
  test("a mixed batch comes back in order", async () => {
    const pool = open({ threads: 1, backend });
    expect(await pool.verifyMany(events)).toEqual(expected);
  });

  test("many callers across several size-triggered flushes each get their own verdict", async () => {
    const pool = open({ threads: 2, backend, batchSize: 7 });
    const got = await Promise.all(cases.map(async (c) => [c.label, await pool.submit(c.event)]));
    expect(got).toEqual(cases.map((c) => [c.label, c.expected]));
    expect(pool.pending).toBe(0);
  });
});

describe("pool behaviour", () => {
  test("a lone event is flushed by the timer", async () => {
    const pool = open({ threads: 1, backend: "noble", batchSize: 1000, flushMs: 1 });
    expect(await pool.submit(events[0]!)).toBe(expected[0]!);
    const i = expected.indexOf("bad-sig");
    expect(await pool.submit(events[i]!)).toBe("bad-sig");
  });

  test("threads: 0 verifies in-thread with the same verdicts", async () => {
    const pool = open({ threads: 0, backend: "auto" });
    expect(pool.reason).toContain("in-thread");
    expect(await pool.verifyMany(events)).toEqual(expected);
  });

  test("close answers what was already submitted, then refuses new work", async () => {
    const pool = new VerifyPool({ threads: 1, backend: "auto", batchSize: 1000, flushMs: 50 });
    const pending = pool.verifyMany(events.slice(0, 10));
    await pool.close();
    expect(await pending).toEqual(expected.slice(0, 10));
    await expect(pool.submit(events[0]!)).rejects.toThrow(/closed/);
  });

  test("the start-up reason names the backend and thread count", () => {
    const pool = open({ threads: 1, backend: "noble" });
    expect(pool.reason).toBe("signature backend noble (configured); 1 verify thread(s)");
  });
});
