// One cooperative yield for every long read.

/**
 * Lets the event loop run other work (frames, writes, other readers) before a long read goes on:
 * every reader that walks more than `yieldEvery` entries (REQ, COUNT, search, negentropy) calls it.
 */
export const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));
