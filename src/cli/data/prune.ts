// `relay prune [--dry-run]`: what the retention rules (retention.rules) and the disk budget
// (store.maxDiskGb) make due now, found and removed as the relay does in the background
// (src/retention/): the same walks, the same removal through removeBySerial, in write
// transactions of a batch each. --dry-run only prints it.

import type { Config } from "../../config/schema.ts";
import { countByKind } from "../../indexes/scan.ts";
import type { BudgetSettings } from "../../retention/budget.ts";
import { budgetSettings, evictionCount, mib } from "../../retention/budget.ts";
import type { Found, WalkOptions } from "../../retention/due.ts";
import { dueForRule, oldestEvictable } from "../../retention/due.ts";
import { REMOVE_BATCH, removeBatch } from "../../retention/remove.ts";
import type { Rule } from "../../retention/rules.ts";
import { RetentionRules } from "../../retention/rules.ts";
import { diskUse } from "../../store/disk-use.ts";
import { writeTxn } from "../../store/serials.ts";
import { closeStore } from "../../store/store.ts";
import type { Store } from "../../store/types.ts";
import { commandArgs } from "../command-args.ts";
import { fmtInt, guarded, StdoutSink } from "../output.ts";
import { openExisting, openForWrite } from "./open-store.ts";

export const help = `relay prune [--dry-run] [--json] [--data DIR] [--config FILE]

Removes what the retention rules (retention.rules) and the disk budget (store.maxDiskGb) make
due now, as a running relay does in the background: events past their rule's time, the oldest
events over a rule's count, and, while the data is over the budget, the oldest evictable events
until it would be under store.lowWaterPercent of it (never kinds 0, 3 or 10002, store.pinKinds
or store.pinAuthors). The budget's share is an estimate (the bytes over the low-water mark at
the data's mean bytes per event); the relay measures again after each round.

Prints each event, oldest first, as its id and why ('rule N' or 'budget') on stdout, and a
summary on stderr: per rule the events of its kinds and those due, the data in use against the
budget. Safe while 'relay serve' runs on the same data directory.

  --dry-run   remove nothing; print what would be removed
  --json      one JSON object on stdout instead: the rules, the budget and the events`;

interface RuleReport {
  rule: number;
  spec: Rule["spec"];
  kinds: number[];
  /** stored events of those kinds */
  stored: number;
  due: number;
}

interface Report {
  dryRun: boolean;
  rules: RuleReport[];
  budget: {
    max: number;
    lowWater: number;
    inUse: number;
    fileBytes: number;
    free: number;
    /** the data's mean bytes per stored event */
    perEvent: number;
    due: number;
  };
  events: { id: string; by: string }[];
  removed: number;
}

const MAX = Number.MAX_SAFE_INTEGER;

/** What the rules make due, every rule in turn. */
async function dueByRules(
  s: Store,
  rules: RetentionRules,
  o: WalkOptions,
  report: Report,
): Promise<Found[][]> {
  const counts = countByKind(s);
  const byRule = rules.governed([...counts].filter(([, n]) => n > 0).map(([k]) => k));
  const out: Found[][] = [];
  const now = Date.now() / 1000;
  for (const r of rules.rules) {
    const kinds = byRule.get(r) ?? [];
    const d = kinds.length > 0 ? await dueForRule(s, r, kinds, now, MAX, o) : undefined;
    const stored = kinds.reduce((a, k) => a + (counts.get(k) ?? 0), 0);
    report.rules.push({ rule: r.n, spec: r.spec, kinds, stored, due: d?.due.length ?? 0 });
    out.push(d?.due ?? []);
  }
  return out;
}

/** What the budget evicts now: over it, the oldest evictable events down to the low-water mark. */
async function dueByBudget(
  s: Store,
  b: BudgetSettings,
  o: WalkOptions,
  report: Report,
  chosen: ReadonlySet<number>,
): Promise<Found[]> {
  const use = diskUse(s);
  const stored = (s.events.getStats() as { entryCount: number }).entryCount;
  const perEvent = stored > 0 ? use.inUse / stored : 0;
  report.budget = { ...report.budget, inUse: use.inUse, fileBytes: use.fileBytes, free: use.free, perEvent };
  if (b.max <= 0 || use.inUse <= b.max) return [];
  // What the rules remove counts towards it.
  const want = evictionCount(Math.max(0, use.inUse - chosen.size * perEvent), b.lowWater, perEvent);
  if (want === 0) return [];
  const found = await oldestEvictable(s, want, { ...o, ...b.evict }, chosen);
  report.budget.due = found.length;
  return found;
}

async function remove(s: Store, serials: number[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < serials.length; i += REMOVE_BATCH) {
    const part = serials.slice(i, i + REMOVE_BATCH);
    n += await writeTxn(s, () => {
      s.arena.reset();
      return removeBatch(s, { serials: part });
    });
  }
  return n;
}

async function prune(s: Store, config: Config, dryRun: boolean): Promise<Report> {
  const b = budgetSettings(config);
  const report: Report = {
    dryRun,
    rules: [],
    budget: { max: b.max, lowWater: b.lowWater, inUse: 0, fileBytes: 0, free: 0, perEvent: 0, due: 0 },
    events: [],
    removed: 0,
  };
  const o: WalkOptions = { hwm: s.lastSerial, yieldEvery: 4096 };
  const rules = new RetentionRules(config["retention.rules"]);
  const byRule = await dueByRules(s, rules, o, report);
  const chosen = new Set<number>();
  byRule.forEach((due, i) => {
    for (const e of due) {
      chosen.add(e.serial);
      report.events.push({ id: e.id, by: `rule ${i + 1}` });
    }
  });
  const evict = await dueByBudget(s, b, o, report, chosen);
  for (const e of evict) report.events.push({ id: e.id, by: "budget" });
  if (!dryRun) {
    for (const due of byRule)
      report.removed += await remove(
        s,
        due.map((e) => e.serial),
      );
    report.removed += await remove(
      s,
      evict.map((e) => e.serial),
    );
  }
  return report;
}

function summary(r: Report): string {
  const lines: string[] = [];
  for (const x of r.rules)
    lines.push(
      `rule ${x.rule} ${JSON.stringify(x.spec)}: ${fmtInt(x.due)} of ${fmtInt(x.stored)} events due${x.kinds.length > 0 ? ` (kinds ${x.kinds.join(", ")})` : ""}`,
    );
  if (r.rules.length === 0) lines.push("no retention rules (retention.rules)");
  const b = r.budget;
  const use = `${mib(b.inUse)} in use, ${mib(b.free)} free in ${mib(b.fileBytes)} of data files`;
  lines.push(
    b.max > 0
      ? `budget ${mib(b.max)} (store.maxDiskGb), low-water ${mib(b.lowWater)}; ${use}: ${fmtInt(b.due)} oldest evictable events due${b.due > 0 ? ` (about ${fmtInt(Math.round(b.perEvent))} bytes each)` : ""}`
      : `no disk budget (store.maxDiskGb); ${use}`,
  );
  lines.push(
    r.dryRun
      ? `dry run: ${fmtInt(r.events.length)} events would be removed; nothing removed`
      : `removed ${fmtInt(r.removed)} events`,
  );
  return lines.join("\n");
}

export async function run(argv: string[]): Promise<number> {
  return guarded("prune", async () => {
    const { flags, config } = commandArgs(argv, { booleans: ["dry-run", "json"], positional: 0 });
    const dryRun = flags["dry-run"] !== undefined;
    let report: Report;
    if (dryRun) {
      const store = openExisting(config.data, config["store.mapSizeGb"]);
      try {
        report = await prune(store, config, true);
      } finally {
        await closeStore(store);
      }
    } else {
      const w = openForWrite(config, true, "prune");
      try {
        report = await prune(w.store, config, false);
        w.finish();
      } finally {
        await w.close();
      }
    }
    const out = new StdoutSink();
    if (flags.json !== undefined) await out.write(`${JSON.stringify(report)}\n`);
    else for (const e of report.events) await out.write(`${e.id} ${e.by}\n`);
    await out.end();
    console.error(summary(report));
    return 0;
  });
}
