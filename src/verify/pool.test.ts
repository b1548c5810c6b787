// The batch wire format and the worker pool: every verdict matches verifyEvent, in input order,
// whether events arrive as one batch, from many callers merged into batches, or one at a time.
import { afterAll, describe, expect, test } from "bun:test";
import { mixedCases, signedEvents } from "../../test/fixtures/signed-events.ts";
import { packBatch, resultAt, verifiable, verifyPacked } from "./batch.ts";
import { loadNativeBackend } from "./native.ts";
import { VerifyPool } from "./pool.ts";
import { nobleBackend } from "./verify.ts";

const native = loadNativeBackend();
const cases = mixedCases(signedEvents(20));
const events = cases.map((c) => c.event);
const expected = cases.map((c) => c.expected);

describe("packed batches (in-thread)", () => {
  test("verifyPacked answers every case like verifyEvent", () => {
    const { buf, slot } = packBatch(events.map(verifiable));
    const answered = verifyPacked(buf, native ?? nobleBackend);
    expect(events.map((_, i) => resultAt(slot, answered, i))).toEqual(expected);
  });

  test("a batch of only malformed ids is decided without hashing", () => {
    const { buf, slot } = packBatch([verifiable({ ...events[0]!, id: "nope" })]);
    expect(buf.length).toBe(4); // no records, no commitments
    expect(resultAt(slot, buf, 0)).toBe("bad-id");
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

  test("many callers, merged into batches of at most batchSize, each get their own verdicts", async () => {
    const pool = open({ threads: 2, backend, batchSize: 7 });
    const got = await Promise.all(
      cases.map(async (c) => [c.label, (await pool.verify([verifiable(c.event)]))[0]]),
    );
    expect(got).toEqual(cases.map((c) => [c.label, c.expected]));
    // callers of several events at once, split across batches
    const halves = await Promise.all([
      pool.verifyMany(events.slice(0, 11)),
      pool.verifyMany(events.slice(11)),
    ]);
    expect(halves.flat()).toEqual(expected);
    expect(pool.pending).toBe(0);
  });
});

describe("pool behaviour", () => {
  test("a lone event goes to an idle thread at once", async () => {
    const pool = open({ threads: 1, backend: "noble", batchSize: 1000 });
    expect(await pool.verify([verifiable(events[0]!)])).toEqual([expected[0]!]);
    const i = expected.indexOf("bad-sig");
    expect(await pool.verify([verifiable(events[i]!)])).toEqual(["bad-sig"]);
  });

  test("with libsecp256k1, a lone event while the threads are idle is checked in-thread; several go to a thread", async () => {
    const pool = open({ threads: 1, backend: native ? "native" : "noble" });
    for (const c of cases) expect(await pool.verify([verifiable(c.event)])).toEqual([c.expected]);
    // noble is too slow to check on the main thread: there every lone event still goes to a thread
    expect(pool.batches).toBe(native ? 0 : cases.length);
    expect(await pool.verifyMany(events)).toEqual(expected);
    expect(pool.batches).toBe(native ? 1 : cases.length + 1);
  });

  test("threads: 0 verifies in-thread with the same verdicts", async () => {
    const pool = open({ threads: 0, backend: "auto" });
    expect(pool.reason).toContain("in-thread");
    expect(await pool.verifyMany(events)).toEqual(expected);
  });

  test("close answers what was already submitted, then refuses new work", async () => {
    const pool = new VerifyPool({ threads: 1, backend: "auto", batchSize: 4 });
    const pending = [pool.verifyMany(events.slice(0, 10)), pool.verifyMany(events.slice(10, 20))];
    await pool.close();
    expect((await Promise.all(pending)).flat()).toEqual(expected.slice(0, 20));
    await expect(pool.verifyMany([events[0]!])).rejects.toThrow(/closed/);
  });

  test("the start-up reason names the backend and thread count", () => {
    const pool = open({ threads: 1, backend: "noble" });
    expect(pool.reason).toBe("signature backend noble (configured); 1 verify thread(s)");
  });
});
