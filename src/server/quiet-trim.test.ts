import { expect, test } from "bun:test";
import { QuietTrim } from "./quiet-trim.ts";

function setup(minGapMs = 0) {
  const state = { commits: 0, lag: 0, trims: [] as number[] };
  const q = new QuietTrim({
    activity: () => state.commits,
    caughtUp: () => state.lag === 0,
    trim: () => state.trims.push(state.commits),
    minGapMs,
  });
  return { state, q };
}

test("trims once after a burst, when a tick saw no commit and nothing lags; never while idle from the start", () => {
  const { state, q } = setup();
  expect([q.tick(0), q.tick(1000)]).toEqual([false, false]);
  state.commits = 5;
  expect(q.tick(2000)).toBe(false); // commits since the last tick
  state.lag = 3;
  expect(q.tick(3000)).toBe(false); // quiet, but the consumers lag
  state.lag = 0;
  expect(q.tick(4000)).toBe(true);
  expect([q.tick(5000), q.tick(6000)]).toEqual([false, false]); // once per burst
  state.commits = 9;
  expect([q.tick(7000), q.tick(8000)]).toEqual([false, true]);
  expect(state.trims).toEqual([5, 9]);
});

test("a trickle of events is trimmed at most once per gap", () => {
  const { state, q } = setup(10_000);
  const trimmedAt: number[] = [];
  for (let t = 0; t < 30_000; t += 1000) {
    // one commit every other second
    if (t % 2000 === 0) state.commits++;
    if (q.tick(t)) trimmedAt.push(t);
  }
  expect(trimmedAt).toEqual([1000, 11_000, 21_000]);
});
