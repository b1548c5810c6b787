// Retention rules and the disk budget in the running relay. Every `retention.intervalSeconds` a
// sweep looks for events past their rule, and four times a second the budget is measured; what
// either finds (due.ts, budget.ts, read outside any transaction) is removed by writer tasks of at
// most REMOVE_BATCH events, queued with the clients' events, so no removal holds a write
// transaction for long and reads never wait for one. One pass runs at a time. The writer asks
// `refuse` about every event it is given: one already past its rule is refused with `blocked:`,
// and every event is refused with `error: storage full: …` while the data is over the budget and
// nothing is left to evict; it asks `hold` before each batch (the budget's files at their bound).
import type { Config } from "../config/schema.ts";
import { log } from "../log.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { FULL } from "../store/batch.ts";
import { readWatermark } from "../store/consumer.ts";
import { INDEXES } from "../store/index-db.ts";
import type { Store } from "../store/types.ts";
import type { Writer } from "../store/writer.ts";
import type { Reject } from "../wire/reasons.ts";
import { error } from "../wire/reasons.ts";
import { Budget, budgetSettings, mib } from "./budget.ts";
import type { WalkOptions } from "./due.ts";
import { dueForRule, storedKinds } from "./due.ts";
import type { RemovalBatch } from "./remove.ts";
import { REMOVE_BATCH, removeBatch } from "./remove.ts";
import { RetentionRules } from "./rules.ts";

declare module "../context.ts" {
  interface RelayContext {
    /** retention rules and the disk budget (src/retention/) */
    retention?: Pruner;
  }
}

/**
 * How often the disk budget is measured (two meta pages and free lists: cheap). A flood of 20
 * MB/s brings 5 MB between two looks, what the budget's slack allows for at its smallest.
 */
const BUDGET_MS = 250;
/**
 * Evictions the consumers have not applied after this long no longer count as on their way
 * back: a stalled consumer must not stop the budget from evicting.
 */
const OUTSTANDING_MS = 30_000;
/** An episode of eviction is over (and logged) after this long without one. */
const QUIET_MS = 10_000;

type Pass = "rules" | "budget";

export class Pruner {
  /** events removed since start by a rule, and evicted for the budget */
  removedByRule = 0;
  removedByBudget = 0;
  readonly budget: Budget;
  /** why events are refused, while over the budget with nothing left to evict */
  full: string | undefined;
  private rules = new RetentionRules([]);
  private rulesFrom: unknown;
  private writer: Writer | undefined;
  private timers: ReturnType<typeof setInterval>[] = [];
  private readonly wanted = new Set<Pass>();
  private running: Promise<void> | undefined;
  private stopped = false;
  /** evictions whose pages are not all back yet: their last removal seq, how many, when */
  private outstanding: { seq: number; n: number; at: number }[] = [];
  /** evicted since the data last passed the budget, and when last */
  private episode = 0;
  private lastEviction = 0;
  /** resolved after the budget's next look: what the writer awaits while it holds events */
  private looked: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(
    private readonly s: Store,
    /** the configuration in force (live settings change on reload) */
    private readonly config: () => Config,
  ) {
    this.budget = new Budget(s);
  }

  /** The rules in force, compiled again only when a reload changed them. */
  currentRules(): RetentionRules {
    const specs = this.config()["retention.rules"];
    if (specs !== this.rulesFrom) {
      this.rules = new RetentionRules(specs);
      this.rulesFrom = specs;
    }
    return this.rules;
  }

  /** The writer's refusal of an event (WriterOptions.refuse), decided in queue order. */
  refuse(e: NostrEvent): Reject | undefined {
    const past = this.currentRules().verdict(e, Date.now() / 1000);
    if (past) return past;
    return this.full === undefined ? undefined : error(`${FULL}${this.full}`);
  }

  /**
   * The writer's hold (WriterOptions.hold): while the files are at their bound and eviction is
   * catching up, events wait for the next look rather than the files growing.
   */
  hold(): Promise<void> | undefined {
    if (!this.budget.holding || this.stopped) return undefined;
    if (!this.looked) {
      let resolve = (): void => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.looked = { promise, resolve };
    }
    return this.looked.promise;
  }

  private release(): void {
    this.looked?.resolve();
    this.looked = undefined;
  }

  start(writer: Writer): void {
    this.writer = writer;
    this.stopped = false;
    const every = this.config()["retention.intervalSeconds"] * 1000;
    this.timers.push(setInterval(() => this.ask("rules"), every));
    this.timers.push(setInterval(() => this.ask("budget"), BUDGET_MS));
    this.ask("rules");
    this.ask("budget");
  }

  /** Stops the timers and waits for the pass in flight (before the writer drains). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.budget.holding = false;
    this.release();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.running;
  }

  /** Runs a pass soon; one at a time, and a pass already waiting is not queued twice. */
  private ask(p: Pass): void {
    if (this.stopped) return;
    this.wanted.add(p);
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
    });
  }

  private async loop(): Promise<void> {
    for (let p = this.next(); p && !this.stopped; p = this.next()) {
      try {
        await (p === "rules" ? this.sweepRules() : this.checkBudget());
      } catch (e) {
        this.budget.holding = false;
        log.error(`${p === "rules" ? "retention" : "disk budget"}: pass failed`, { error: String(e) });
      } finally {
        if (p === "budget") this.release();
      }
    }
  }

  private next(): Pass | undefined {
    for (const p of ["rules", "budget"] as const) if (this.wanted.delete(p)) return p;
    return undefined;
  }

  private walk(): WalkOptions {
    return {
      hwm: this.writer?.visibleSerial ?? this.s.lastSerial,
      yieldEvery: this.config()["query.yieldEvery"],
      cancelled: () => this.stopped,
    };
  }

  private async remove(b: RemovalBatch): Promise<number> {
    const w = this.writer;
    if (!w || b.serials.length === 0) return 0;
    // A task that cannot commit (a full disk) removes nothing; the next pass tries again.
    return w.task((s) => removeBatch(s, b)).catch(() => 0);
  }

  /** Removes every event past its rule, a batch per task. */
  private async sweepRules(): Promise<void> {
    const rules = this.currentRules();
    if (rules.empty) return;
    const s = this.s;
    const byRule = storedKinds(s, rules);
    const removed: Record<string, number> = {};
    for (const r of rules.rules) {
      const kinds = byRule.get(r);
      if (!kinds) {
        rules.setFloor(r, undefined);
        continue;
      }
      for (;;) {
        if (this.stopped) return;
        const seq = s.lastRemoval;
        const d = await dueForRule(s, r, kinds, Date.now() / 1000, REMOVE_BATCH, this.walk());
        // The floor is known before the removal commits: an event older than every kept one is
        // refused from then on. Set after it, a client that saw the cut (a REQ answered from the
        // commit) could still get an older event stored in the turn before the sweep went on.
        if (!d.more) rules.setFloor(r, d.floor);
        const count = d.countOnly > 0 ? { only: d.countOnly, kinds: new Set(kinds), seq } : undefined;
        const n = await this.remove({ serials: d.due.map((e) => e.serial), count });
        this.removedByRule += n;
        if (n > 0) removed[`rule ${r.n}`] = (removed[`rule ${r.n}`] ?? 0) + n;
        // Held back (events of the rule's kinds removed meanwhile): the next sweep counts again.
        if (n < d.due.length || !d.more) break;
      }
    }
    if (Object.keys(removed).length > 0) log.info("retention: removed events past their rules", removed);
  }

  /** Measures the data; near the budget, evicts down to its target (budget.ts). */
  private async checkBudget(): Promise<void> {
    const b = budgetSettings(this.config());
    if (b.max <= 0) {
      this.budget.evicting = false;
      this.outstanding = [];
      this.roomAgain();
      return;
    }
    const was = this.budget.evicting;
    const stored = (this.s.events.getStats() as { entryCount: number }).entryCount;
    const v = await this.budget.look(b, stored, this.pending(), this.walk());
    // The writer asks again: it holds events on, or writes them (the evictions below run either way).
    this.release();
    const use = this.budget.use;
    if (v.action === "none") {
      // An episode ends once a quiet spell follows it: under a flood the budget evicts at every
      // look, and a line per look would say nothing more.
      if (this.episode > 0 && Date.now() - this.lastEviction >= QUIET_MS) {
        log.info("disk budget: eviction done, under the mark again", {
          evicted: this.episode,
          inUse: use ? mib(use.inUse) : "",
          target: mib(this.budget.target),
        });
        this.episode = 0;
      }
      this.roomAgain();
      return;
    }
    if (v.action === "full") {
      if (this.full === undefined)
        log.error("disk budget: over it with nothing left to evict, events refused", { reason: v.reason });
      this.full = v.reason;
      return;
    }
    this.roomAgain();
    if (!was && this.episode === 0)
      log.info("disk budget: near it, evicting the oldest evictable events", {
        inUse: mib(v.use.inUse),
        budget: mib(b.max),
        target: mib(v.target),
      });
    let n = 0;
    for (let i = 0; i < v.events.length && !this.stopped; i += REMOVE_BATCH)
      n += await this.remove({ serials: v.events.slice(i, i + REMOVE_BATCH).map((e) => e.serial) });
    this.removedByBudget += n;
    this.episode += n;
    if (n > 0) {
      this.outstanding.push({ seq: this.s.lastRemoval, n, at: Date.now() });
      this.lastEviction = Date.now();
    }
  }

  /**
   * Events evicted whose pages have not come back yet: those the consumers have not applied
   * (the log keeps each one's removal record until they have, the derived indexes its entries).
   */
  private pending(): number {
    const s = this.s;
    const applied = s.logRemovals ? (readWatermark(s, INDEXES)?.removal ?? 0) : Number.POSITIVE_INFINITY;
    const since = Date.now() - OUTSTANDING_MS;
    this.outstanding = this.outstanding.filter((o) => o.seq > applied && o.at > since);
    let n = 0;
    for (const o of this.outstanding) n += o.n;
    return n;
  }

  private roomAgain(): void {
    if (this.full === undefined) return;
    log.info("disk budget: room again, events accepted");
    this.full = undefined;
  }
}
