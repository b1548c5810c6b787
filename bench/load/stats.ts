// Latency samples and their summaries, plus the fixed-width tables the report prints. Samples are
// kept whole (not bucketed): runs are bounded, and exact p99s are easier to trust.

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export class Samples {
  private xs: number[] = [];

  add(ms: number): void {
    this.xs.push(ms);
  }

  get count(): number {
    return this.xs.length;
  }

  summary(): Summary {
    const s = Float64Array.from(this.xs).sort();
    const at = (q: number): number =>
      s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
    let sum = 0;
    for (const x of s) sum += x;
    return {
      n: s.length,
      p50: round(at(0.5)),
      p90: round(at(0.9)),
      p99: round(at(0.99)),
      max: round(s.length ? s[s.length - 1]! : 0),
      mean: round(s.length ? sum / s.length : 0),
    };
  }
}

export const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

/** Right-aligned columns under a header, for terminals and for pasting into markdown. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join("\n");
}

export const fmtRate = (n: number): string =>
  n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(1);
