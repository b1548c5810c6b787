// README's "Layout" names every folder of src/ (and of src/cli, whose two kinds of commands are
// folders), so a newcomer's map of the tree cannot fall behind it as folders come and go.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

function folders(rel: string): string[] {
  return readdirSync(join(ROOT, rel), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `${rel}/${d.name}`);
}

function layoutNames(): Set<string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no Layout block");
  return new Set(block.split("\n").map((line) => line.split(/\s/)[0]!.replace(/,$/, "")));
}

test("README's layout names every folder under src/ and src/cli/, and no folder that is gone", () => {
  const names = layoutNames();
  const tree = [...folders("src"), ...folders("src/cli")].sort();
  expect(tree.filter((f) => !names.has(f))).toEqual([]);
  const listed = [...names].filter((n) => n.startsWith("src/") && !n.endsWith(".ts"));
  expect(listed.filter((n) => !tree.includes(n))).toEqual([]);
});
