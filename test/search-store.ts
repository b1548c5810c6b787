// A store with its consumers and writer wired as the relay wires them, without the network, for
// the search tests: opened when the test file loads, closed after its tests.
import { afterAll } from "bun:test";
import type { Config } from "../src/config/schema.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import type { QueryOptions } from "../src/indexes/query.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { Writer } from "../src/store/writer.ts";
import { tempDir } from "./harness.ts";

/** `thread`: the consumers on their own thread, as the relay runs them (searches walk there too). */
export function searchStore(prefix: string, config: Config, thread = false) {
  const dir = tempDir(prefix);
  const s = openStore(dir);
  // the consumers' thread opens the store at config.data
  const d = openConsumers(s, { ...config, data: dir }, { log: () => {}, thread });
  const w = new Writer(s, 64, (st, rm) => d.runner.committed(st, rm));
  afterAll(async () => {
    await w.drain();
    await d.runner.stop();
    await closeStore(s);
  });
  /** What a REQ of the relay reads with: everything the writer has made visible. */
  const opts = (): QueryOptions => ({
    hwm: w.visibleSerial,
    defaultLimit: 100,
    maxLimit: 1000,
    yieldEvery: 16,
    search: d.searcher,
  });
  return { s, d, ix: d.search!, w, opts };
}
