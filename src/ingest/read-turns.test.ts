// Reads yield the main thread to what other threads hand back while an event is being written.
// "other" stands for a commit's or a verification's callback: a message from another thread,
// which the event loop runs before the next turn's immediates.
import { expect, test } from "bun:test";
import { ReadTurns } from "./read-turns.ts";

/** Runs `reads` reads through the gate, each busy for `ms`, with another thread's message sent during the first. */
async function run(turns: ReadTurns, reads: number, ms: number): Promise<string[]> {
  const order: string[] = [];
  const { port1, port2 } = new MessageChannel();
  const message = new Promise<void>((resolve) => {
    port2.onmessage = () => {
      order.push("other");
      resolve();
    };
  });
  const read = async (n: number): Promise<void> => {
    const wait = turns.admit();
    if (wait) await wait;
    order.push(`read ${n}`);
    if (n === 1) port1.postMessage(1);
    const t0 = performance.now();
    while (performance.now() - t0 < ms);
  };
  await Promise.all([...Array.from({ length: reads }, (_, i) => read(i + 1)), message]);
  port1.close();
  return order;
}

test("while an event is being written, a read past the budget waits for what another thread handed back", async () => {
  const order = await run(new ReadTurns(1, () => true), 3, 2);
  expect(order).toEqual(["read 1", "other", "read 2", "read 3"]);
});

test("reads within the budget share a turn", async () => {
  const order = await run(new ReadTurns(1000, () => true), 3, 1);
  expect(order).toEqual(["read 1", "read 2", "read 3", "other"]);
});

test("with nothing being written, or no budget, every read starts at once", async () => {
  expect(await run(new ReadTurns(1, () => false), 3, 2)).toEqual(["read 1", "read 2", "read 3", "other"]);
  expect(await run(new ReadTurns(0, () => true), 3, 2)).toEqual(["read 1", "read 2", "read 3", "other"]);
});

test("reads start in arrival order: none overtakes one that waits", async () => {
  let writing = true;
  const turns = new ReadTurns(1, () => writing);
  const order: number[] = [];
  const read = async (n: number): Promise<void> => {
    const wait = turns.admit();
    if (wait) await wait;
    order.push(n);
    const t0 = performance.now();
    while (performance.now() - t0 < 2);
  };
  const first = [read(1), read(2), read(3)];
  expect(turns.queued).toBe(2);
  // The write is answered: later reads still queue behind the waiting ones, which now start
  // together in the next turn.
  writing = false;
  await Promise.all([...first, read(4)]);
  expect(order).toEqual([1, 2, 3, 4]);
  expect(turns.queued).toBe(0);
  expect(turns.deferred).toBe(3);
});
