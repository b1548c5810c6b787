// The Prometheus text format: HELP and TYPE lines, then samples with escaped labels.

export type Labels = Record<string, string>;

export class Exposition {
  private lines: string[] = [];
  metric(name: string, type: "counter" | "gauge", help: string, samples: [Labels, number][]): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) {
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",");
      this.lines.push(`${name}${l ? `{${l}}` : ""} ${Number.isFinite(value) ? value : 0}`);
    }
  }
  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

export const byLabel = (rec: Record<string, number>, label: string): [Labels, number][] =>
  Object.entries(rec).map(([k, v]) => [{ [label]: k }, v]);
