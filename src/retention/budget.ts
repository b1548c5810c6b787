// The disk budget (store.maxDiskGb). What it counts: the pages in use in data.mdb and
// derived/data.mdb (store/disk-use.ts: file pages less LMDB's free pages). When that nears the
// budget the oldest evictable events are evicted down to the low-water mark; the pages they free
// go on LMDB's free lists and later writes take them, so the files stop growing instead of
// shrinking. While the data is over the budget and nothing is evictable, events are refused
// with `error: storage full: …`, as on a full disk; reads go on.
//
// A removal frees its pages late: the log's once every consumer has applied it and its removal
// record is trimmed, the derived indexes' once they apply it. A look at the budget counts what
// was evicted but not yet given back (`outstanding`) as already gone, at the data's mean bytes
// per event, so that it neither evicts twice for the same pages nor waits for them: looks every
// quarter second then evict in step with what arrives, however fast that is.
import type { Config } from "../config/schema.ts";
import type { DiskUse } from "../store/disk-use.ts";
import { diskUse } from "../store/disk-use.ts";
import type { Store } from "../store/types.ts";
import type { EvictOptions, Found, WalkOptions } from "./due.ts";
import { oldestEvictable } from "./due.ts";

export const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;

const MIB = 2 ** 20;

/**
 * The most the data files take for a budget of `max` bytes: what the budget promises for the
 * data directory (docs/operations.md), and what it evicts to keep.
 */
export const fileBound = (max: number): number => Math.floor(max * 1.25 + 16 * MIB);

/**
 * How many bytes of file a byte in use takes, until a file's growth says otherwise: LMDB writes
 * each changed page to a free one, so a file runs at about twice its pages in use while they
 * are rewritten (docs/operations.md, the slack).
 */
const FIRST_AMP = 2;
/** the most that ratio is taken to be, however a file grew */
const MAX_AMP = 4;
/** The data in use is never aimed below this share of the budget (past it, storage full). */
const MIN_TARGET = 0.2;
/**
 * Events wait (the writer holds them) once the files are this close to their bound, with less
 * than 1/HOLD_FREE of it free inside them.
 */
const HOLD_MARGIN = 2 * MIB;
const HOLD_FREE = 8;

/**
 * Events evicted per look at most. The next look measures again, so an estimate that is off
 * (the mean bytes per event, pages that come back late) costs at most a look; and a look's
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
 * How many events to evict to bring `inUse` bytes down to the low-water mark, at `perEvent`
 * bytes each (the data's mean: an estimate, the budget measures again at its next look).
 */
export function evictionCount(inUse: number, lowWater: number, perEvent: number): number {
  if (inUse <= lowWater || perEvent <= 0) return 0;
  return Math.max(1, Math.ceil((inUse - lowWater) / perEvent));
}

export class Budget {
  /** the last measure, for /metrics and the log */
  use: DiskUse | undefined;
  /** near the budget: evicting until under the target */
  evicting = false;
  /** what the data in use is kept under now (bytes): the low-water mark, or less where the files need it */
  target = 0;
  /** the files are at their bound while eviction catches up: the writer holds events */
  holding = false;
  /** per file: bytes of file per byte in use, learned when the file grows; its length then */
  private readonly amp = new Map<string, { ratio: number; length: number }>();
  /**
   * what the store held when a look found nothing to evict: the same store and settings have
   * nothing either, so the walk is not repeated every second while nothing changes
   */
  private emptyAt = "";

  constructor(private readonly s: Store) {}

  /**
   * The data in use the files have room for: the files' bound over the bytes of file that each
   * byte in use takes (each file's ratio, weighted by its share of the data), never above the
   * low-water mark. A file that grows while the budget evicts teaches its ratio: the length it
   * needed for what it held (the largest seen since start).
   */
  private aim(b: BudgetSettings, use: DiskUse): number {
    let weighted = 0;
    for (const f of use.files) {
      let a = this.amp.get(f.file);
      if (!a) {
        a = { ratio: FIRST_AMP, length: f.fileBytes };
        this.amp.set(f.file, a);
      } else if (f.fileBytes > a.length) {
        // Learned only while evicting: a file that grows as the data first fills it says
        // nothing of the pages eviction and its rewrites need (appends take about one each).
        if (this.evicting && f.inUse >= MIB)
          a.ratio = Math.min(MAX_AMP, Math.max(a.ratio, f.fileBytes / f.inUse));
        a.length = f.fileBytes;
      }
      weighted += a.ratio * f.inUse;
    }
    const ratio = use.inUse > 0 ? weighted / use.inUse : FIRST_AMP;
    const room = (fileBound(b.max) - HOLD_MARGIN) / ratio;
    return Math.floor(Math.max(b.max * MIN_TARGET, Math.min(b.lowWater, room)));
  }

  /**
   * Measures and decides. `stored`: events in the store now; `outstanding`: events evicted
   * whose pages have not all come back yet.
   */
  async look(b: BudgetSettings, stored: number, outstanding: number, o: WalkOptions): Promise<BudgetVerdict> {
    const use = diskUse(this.s);
    this.use = use;
    if (b.max <= 0) {
      this.evicting = false;
      this.holding = false;
      this.target = 0;
      return { action: "none" };
    }
    const target = this.aim(b, use);
    // Eviction starts half the band above where it stops: rounds apart when data trickles in,
    // a round every look when it pours.
    const near = Math.min(b.max, target + (b.max - b.lowWater) / 2);
    const perEvent = use.inUse / Math.max(1, stored + outstanding);
    const estimate = Math.max(0, use.inUse - outstanding * perEvent);
    this.target = target;
    // Held only where the files have little free room left to write in: pages free inside them
    // are taken again by later writes (at 16 MiB, holding whenever the files were at their
    // bound, with half their pages free, halved the rate taken and held OKs for seconds).
    const bound = fileBound(b.max);
    this.holding = use.fileBytes >= bound - HOLD_MARGIN && use.free < bound / HOLD_FREE && estimate > target;
    // Holding events evicts too, however near the mark: otherwise nothing would move again.
    if (estimate > near || this.holding) this.evicting = true;
    if (!this.evicting || estimate <= target) {
      this.evicting = false;
      return { action: "none" };
    }
    const state = `${this.s.lastSerial}/${this.s.lastRemoval}/${JSON.stringify(b.evict, (_, v) => (v instanceof Set ? [...v] : v))}`;
    const events =
      state === this.emptyAt
        ? []
        : await oldestEvictable(this.s, Math.min(EVICT_ROUND, evictionCount(estimate, target, perEvent)), {
            ...o,
            ...b.evict,
          });
    if (events.length > 0) {
      this.emptyAt = "";
      return { action: "evict", events, use, target };
    }
    this.emptyAt = state;
    this.holding = false;
    // Full past the budget; past less where the files leave room for less (scaled alike).
    if (estimate <= (b.max * target) / Math.max(1, b.lowWater)) {
      // Under the mark with nothing evictable: done until the data passes it again.
      this.evicting = false;
      return { action: "none" };
    }
    return {
      action: "full",
      reason:
        target < b.lowWater
          ? `the data (${mib(use.inUse)} in use) is over what the disk budget (store.maxDiskGb, ${mib(b.max)}) leaves room for in its files (${mib(target)}) and nothing is left to evict`
          : `the data (${mib(use.inUse)} in use) is over the disk budget (store.maxDiskGb, ${mib(b.max)}) and nothing is left to evict`,
    };
  }
}
