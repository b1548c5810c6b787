// Registers every micro-benchmark (bench/verify.bench.ts too, when present), runs them once with
// mitata, and condenses mitata's trials into per-group ratios against each group's baseline.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { run } from "mitata";
import { table } from "../load/stats.ts";

export interface MicroEntry {
  name: string;
  baseline: boolean;
  avgNs: number;
  p50Ns: number;
  p99Ns: number;
  /** baseline avg ÷ this avg: above 1 is faster than the baseline */
  speedup: number | null;
}

export interface MicroGroup {
  group: string;
  entries: MicroEntry[];
}

interface Ran {
  layout: { name: string | number | null }[];
  benchmarks: {
    alias: string;
    baseline: boolean;
    group: number;
    runs: { stats?: { avg: number; p50: number; p99: number } }[];
  }[];
}

const FILES = ["keys", "filter", "frames", "hash", "writer"];

export async function runMicro(filter: RegExp | undefined): Promise<MicroGroup[]> {
  // Imported first: if it calls run() itself on import, it runs alone and leaves the queue empty;
  // if it only registers (e.g. behind import.meta.main), its groups join this run.
  const verify = join(import.meta.dir, "..", "verify.bench.ts");
  if (existsSync(verify))
    await import(verify).catch((e: Error) => console.error(`bench/verify.bench.ts failed: ${e.message}`));
  for (const f of FILES) await import(`./${f}.bench.ts`);
  // mitata's typings omit `layout` and each trial's `group` index, which name the groups.
  const { benchmarks, layout } = (await run(filter ? { filter } : {})) as unknown as Ran;
  const groups = new Map<string, MicroEntry[]>();
  for (const t of benchmarks) {
    const s = t.runs[0]?.stats;
    if (!s) continue;
    const name = String(layout[t.group]?.name ?? "ungrouped");
    const list = groups.get(name) ?? [];
    list.push({
      name: t.alias,
      baseline: t.baseline,
      avgNs: s.avg,
      p50Ns: s.p50,
      p99Ns: s.p99,
      speedup: null,
    });
    groups.set(name, list);
  }
  return [...groups].map(([group, entries]) => {
    const base = entries.find((e) => e.baseline);
    for (const e of entries) e.speedup = base ? Number((base.avgNs / e.avgNs).toFixed(2)) : null;
    return { group, entries };
  });
}

const ns = (x: number): string =>
  x >= 1e6 ? `${(x / 1e6).toFixed(2)} ms` : x >= 1e3 ? `${(x / 1e3).toFixed(2)} µs` : `${x.toFixed(1)} ns`;

/** One table for all groups: the numbers to compare are the ratios within a group. */
export function microTable(groups: readonly MicroGroup[]): string {
  const rows: string[][] = [];
  for (const g of groups)
    for (const e of g.entries)
      rows.push([
        g.group,
        `${e.name}${e.baseline ? " (baseline)" : ""}`,
        ns(e.avgNs),
        ns(e.p99Ns),
        e.speedup === null ? "" : `${e.speedup.toFixed(2)}×`,
      ]);
  return table(["group", "variant", "avg", "p99", "vs baseline"], rows);
}
