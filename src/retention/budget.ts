// The disk budget (store.maxDiskGb). What it counts: the pages in use in data.mdb and
// derived/data.mdb (store/disk-use.ts: file pages less LMDB's free pages). Past the budget the
// oldest evictable events are evicted until that is under the low-water mark; the pages they
// free go on LMDB's free lists and later writes take them, so the files stop growing instead of
// shrinking. While the data is over the budget and nothing is evictable, events are refused
// with `error: storage full: …`, as on a full disk; reads go on.
//
// A removal frees the log's pages at its commit and the derived indexes' pages once the
// consumers apply it, so after each round of evictions the budget waits for the consumers
// before it measures again: otherwise it would evict for pages already on their way back.
import type { Config } from "../config/schema.ts";
import type { DiskUse } from "../store/disk-use.ts";
import { diskUse } from "../store/disk-use.ts";
import type { Store } from "../store/types.ts";
import type { EvictOptions, Found, WalkOptions } from "./due.ts";
import { oldestEvictable } from "./due.ts";

export const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;

/**
 * Events evicted per round at most. The next round measures again, so an estimate that is off
 * (the mean bytes per event, pages that come back late) costs at most a round; and a round's
 * removals, with their stored JSON, are what the consumers hold and apply in one or two batches.
 */
export const EVICT_ROUND = 4096;

/** What one look at the budget decided. */
export type BudgetVerdict =
  /** under it (or no budget): nothing to do */
  | { action: "none" }
  /** evict these, oldest first */
  | { action: "evict"; events: Found[]; use: DiskUse; target: number }
  /** over it, and nothing is evictable: refuse events for this reason */
  | { action: "full"; reason: string };

export interface BudgetSettings {
  /** bytes, 0 = no budget */
  max: number;
  lowWater: number;
  evict: Omit<EvictOptions, keyof WalkOptions>;
}

export function budgetSettings(c: Config): BudgetSettings {
  const max = Math.floor(c["store.maxDiskGb"] * 2 ** 30);
  return {
    max,
    lowWater: Math.floor((max * c["store.lowWaterPercent"]) / 100),
    evict: {
      first: c["store.evictFirstKinds"],
      pinKinds: new Set(c["store.pinKinds"]),
      pinAuthors: new Set(c["store.pinAuthors"]),
    },
  };
}

/**
 * How many events to evict to bring `use` down to the low-water mark: the bytes over it at the
 * data's mean bytes per stored event (an estimate: the budget measures again after each round).
 */
export function evictionCount(use: DiskUse, lowWater: number, stored: number): number {
  if (use.inUse <= lowWater || stored === 0) return 0;
  const perEvent = use.inUse / stored;
  return Math.max(1, Math.ceil((use.inUse - lowWater) / perEvent));
}

export class Budget {
  /** the last measure, for /metrics and the log */
  use: DiskUse | undefined;
  /** over the budget: evicting until under the low-water mark */
  evicting = false;
  /**
   * what the store held when a look found nothing to evict: the same store and settings have
   * nothing either, so the walk is not repeated every second while nothing changes
   */
  private emptyAt = "";

  constructor(private readonly s: Store) {}

  /** Measures and decides. `stored`: events in the store now. */
  async look(b: BudgetSettings, stored: number, o: WalkOptions): Promise<BudgetVerdict> {
    const use = diskUse(this.s);
    this.use = use;
    if (b.max <= 0) {
      this.evicting = false;
      return { action: "none" };
    }
    if (use.inUse > b.max) this.evicting = true;
    if (!this.evicting || use.inUse <= b.lowWater) {
      this.evicting = false;
      return { action: "none" };
    }
    const state = `${this.s.lastSerial}/${this.s.lastRemoval}/${JSON.stringify(b.evict, (_, v) => (v instanceof Set ? [...v] : v))}`;
    const events =
      state === this.emptyAt
        ? []
        : await oldestEvictable(this.s, Math.min(EVICT_ROUND, evictionCount(use, b.lowWater, stored)), {
            ...o,
            ...b.evict,
          });
    if (events.length > 0) {
      this.emptyAt = "";
      return { action: "evict", events, use, target: b.lowWater };
    }
    this.emptyAt = state;
    if (use.inUse <= b.max) {
      // Under the budget with nothing evictable: done until the data passes it again.
      this.evicting = false;
      return { action: "none" };
    }
    return {
      action: "full",
      reason: `the data (${mib(use.inUse)} in use) is over the disk budget (store.maxDiskGb, ${mib(b.max)}) and nothing is left to evict`,
    };
  }
}
