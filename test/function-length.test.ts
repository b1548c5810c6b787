// The two engines (the log's writer in store/, the derived side's runner in consumers/) stay
// readable in pieces: no function there grows past 80 lines, and neither file past 350. The
// compiler we use (TypeScript 7) has no JavaScript API, so functions are found by the formatter's
// layout: a top-level function or a class member starts at indent 0 or 2 and its body closes on
// the first `}` at that indent. Every longer nested function lies inside one of those.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const MAX_LINES = 80;

interface Span {
  file: string;
  line: number;
  lines: number;
  head: string;
}

const NOT_A_FUNCTION =
  /^(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(class|interface|type|enum|namespace)\b/;

/** Functions (and class members) of one file with their length in lines, header to closing brace. */
export function functionSpans(file: string, text: string): Span[] {
  const lines = text.split("\n");
  const spans: Span[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const indent = line.length - line.trimStart().length;
    if (indent !== 0 && indent !== 2) continue;
    const body = line.trim();
    if (body === "" || /^[})\]/*]/.test(body) || NOT_A_FUNCTION.test(body)) continue;
    // The header may wrap: its last line is the one at the same indent that opens the body.
    let open = i;
    if (!body.endsWith("{")) {
      if (!/[(<]$/.test(body)) continue;
      open = i + 1;
      while (
        open < lines.length &&
        !(indentOf(lines[open]!) === indent && lines[open]!.trimEnd().endsWith("{"))
      ) {
        if (indentOf(lines[open]!) < indent + 2 && !/^\s*[)>]/.test(lines[open]!)) break;
        open++;
      }
      if (open >= lines.length || !lines[open]!.trimEnd().endsWith("{")) continue;
    }
    const head = lines.slice(i, open + 1).join(" ");
    if (!head.includes("(")) continue;
    const pad = " ".repeat(indent);
    let end = open + 1;
    while (end < lines.length && !(lines[end]!.startsWith(`${pad}}`) && indentOf(lines[end]!) === indent))
      end++;
    spans.push({ file, line: i + 1, lines: end - i + 1, head: body.slice(0, 60) });
    i = end;
  }
  return spans;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => `${dir}/${f}`);
}

test("no function in store/ or consumers/ is longer than 80 lines", () => {
  const long = [...sources("src/store"), ...sources("src/consumers")]
    .flatMap((f) => functionSpans(f, readFileSync(join(ROOT, f), "utf8")))
    .filter((s) => s.lines > MAX_LINES)
    .map((s) => `${s.file}:${s.line} ${s.head} (${s.lines} lines)`);
  expect(long).toEqual([]);
});

test("the writer and the runner are under 350 lines each", () => {
  for (const f of ["src/store/writer.ts", "src/consumers/runner.ts"]) {
    const n = readFileSync(join(ROOT, f), "utf8").split("\n").length;
    expect({ f, under350: n < 350 }).toEqual({ f, under350: true });
  }
});

test("the finder sees a long function, a wrapped header and a class member, and no class or object", () => {
  const long = Array.from({ length: 90 }, (_, i) => `  x${i}();`).join("\n");
  const text = [
    "export function a(",
    "  p: number,",
    "): void {",
    long,
    "}",
    "export class C {",
    "  async m(q: string): Promise<void> {",
    long,
    "  }",
    "}",
    "const o = {",
    long.replaceAll("();", ": 1,"),
    "};",
  ].join("\n");
  const spans = functionSpans("t.ts", text).map((s) => [s.line, s.lines]);
  expect(spans).toEqual([
    [1, 94],
    [96, 92],
  ]);
});
