import { expect, test } from "bun:test";
import { Pace } from "./pace.ts";

/** A pace that has seen one batch of 1,000 events applied in one second (1,000 events/s). */
function learned(): Pace {
  const p = new Pace();
  p.applying(1000, 0);
  p.applied(1000, true);
  return p;
}

test("no delay until a batch has applied: the rate is not known", () => {
  const p = new Pace();
  p.applying(1000, 0);
  p.committed(100, 1900, 2000, 0, 0, 10);
  expect(p.delay(10)).toBe(0);
});

test("no delay while the backlog holds at most half its bound", () => {
  const p = learned();
  p.applying(1000, 1000);
  p.committed(100, 1000, 2000, 0, 0, 1200);
  expect(p.delay(1200)).toBe(0);
  p.committed(100, 900, 2000, 15 * 2 ** 20, 32 * 2 ** 20, 1200);
  expect(p.delay(1200)).toBe(0);
});

test("past half, each commit owes the share of the time left that its events take of the room left", () => {
  const p = learned();
  p.applying(1000, 1000); // expected to take 1,000 ms at 1,000 events/s
  // 200 ms in: 800 ms left, 800 events of room (1,200 of 2,000 wait): 100 events owe 100 ms
  p.committed(100, 1200, 2000, 0, 0, 1200);
  expect(p.delay(1200)).toBeCloseTo(100, 6);
  // owed time adds up, and what is waited for is what is left of it
  p.committed(100, 1300, 2000, 0, 0, 1200);
  expect(p.delay(1250)).toBeCloseTo(50 + (100 * 800) / 700, 6);
  expect(p.delays).toBe(2);
});

test("the bytes' bound counts too, whichever is fuller", () => {
  const p = learned();
  p.applying(1000, 1000);
  // events at 10% of theirs, bytes at 75%: the room left is a third of what waits
  p.committed(10, 200, 2000, 24 * 2 ** 20, 32 * 2 ** 20, 1200);
  expect(p.delay(1200)).toBeCloseTo((10 * 800) / (200 / 3), 6);
});

test("a delay never runs past the time the batch in flight is expected to take", () => {
  const p = learned();
  p.applying(1000, 1000);
  p.committed(5000, 1999, 2000, 0, 0, 1200);
  expect(p.delay(1200)).toBeCloseTo(800, 6);
});

test("a batch later than expected leaves a tenth of its expected time", () => {
  const p = learned();
  p.applying(1000, 1000);
  // 3 s in, expected 1 s: 100 ms taken as left; 100 events of 800 room owe 12.5 ms
  p.committed(100, 1200, 2000, 0, 0, 4000);
  expect(p.delay(4000)).toBeCloseTo(12.5, 6);
});

test("a batch sent while another applies counts its time from the end of that one", () => {
  const p = new Pace();
  p.applying(1000, 0);
  p.applying(1000, 500); // sent while the first applies
  p.applied(1000, true); // 1,000 events in 1,000 ms
  p.applied(1500, true); // then 1,000 more in the 500 ms since the first was done: 2,000/s
  // the average follows the second by 30%: 1,000 + 0.3 × 1,000 = 1,300 events/s
  p.applying(1300, 2000); // expected to take one second
  p.committed(100, 1200, 2000, 0, 0, 2200);
  expect(p.delay(2200)).toBeCloseTo(100, 6);
});

test("a failed batch says nothing of the rate", () => {
  const p = learned();
  p.applying(1000, 1000);
  p.applied(11_000, false); // ten seconds: a full disk, say
  p.applying(1000, 11_000);
  p.committed(100, 1200, 2000, 0, 0, 11_200);
  expect(p.delay(11_200)).toBeCloseTo(100, 6);
});
