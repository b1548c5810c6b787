// One-way layers: no module of src/ (or of bench/) reaches itself through its imports, and the folders of src/
// (server, ingest, fanout, store …; a nested folder such as cli/data or cli/net is one apart from
// cli/) import each other in one direction only. The top-level files (relay.ts, context.ts,
// log.ts, main.ts) are the composition root: each is a node of its own in the folder graph, so a
// loop that passes through one (a folder → context.ts → another folder → back) is found too.
// Type-only imports count everywhere: they are erased at run time, but a module that names
// another's types depends on it, and import-graph tools (madge, dependency-cruiser) count them.
// Dynamic `import()` does not count: it is how main.ts loads a command when it runs.
import { expect, test } from "bun:test";
import { dirname, join, relative } from "node:path";
import { Glob } from "bun";

/** A loop `[a, b, c]` written from its smallest member and closed: `b → c → a → b`. */
function rotate(loop: string[]): string[] {
  const i = loop.indexOf([...loop].sort()[0]!);
  const r = [...loop.slice(i), ...loop.slice(0, i)];
  return [...r, r[0]!];
}

/**
 * The folder a file sits in, nested ones apart (cli/data, cli/net and cli/ are three layers); a
 * file of the root is a node of its own.
 */
const dirOf = (f: string): string => (f.includes("/") ? dirname(f) : f);

const SRC = join(import.meta.dir, "..", "src");
/** `import … from "x"`, `import "x"`, `export … from "x"` at the start of a statement. */
const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^;"'`]*?\s+from\s+)?["']([^"']+)["']/gm;

/** The imports between the modules under `root` (imports that leave it are not edges). */
async function importGraph(root = SRC): Promise<Map<string, string[]>> {
  const files = [...new Glob("**/*.ts").scanSync(root)].filter((f) => !f.endsWith(".d.ts")).sort();
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = await Bun.file(join(root, f)).text();
    const deps = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1]!;
      if (!spec.startsWith(".")) continue;
      const to = relative(root, join(root, dirname(f), spec));
      if (to.endsWith(".ts") && !to.startsWith("..")) deps.add(to);
    }
    graph.set(f, [...deps].sort());
  }
  return graph;
}

/**
 * The cycles as paths `a → b → … → a`: per strongly connected component (Tarjan), the shortest
 * loop through each of its members, each loop once (written from its smallest member).
 */
function cycles(graph: Map<string, Iterable<string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    const self = [...(graph.get(v) ?? [])].includes(v);
    if (component.size === 1 && !self) return;
    // One loop through each member: every module (or folder) caught in the tangle is named.
    const loops = new Set<string>();
    for (const m of component) loops.add(shortestLoop(graph, m, component));
    found.push(...loops);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort();
}

/** The shortest path from `start` back to itself inside one component (breadth first). */
function shortestLoop(graph: Map<string, Iterable<string>>, start: string, within: Set<string>): string {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!within.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = from.get(x)!) path.splice(1, 0, x);
        return rotate(path).join(" → ");
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

test("no module in src/ imports itself through a cycle", async () => {
  expect(cycles(await importGraph())).toEqual([]);
});

test("no module in bench/ imports itself through a cycle", async () => {
  expect(cycles(await importGraph(join(import.meta.dir, "..", "bench")))).toEqual([]);
});

test("the folders of src/ import each other one way only", async () => {
  const graph = await importGraph();
  const folders = new Map<string, Set<string>>();
  /** one import that makes each folder edge, to name in the failure */
  const why = new Map<string, string>();
  for (const [f, deps] of graph)
    for (const d of deps) {
      const a = dirOf(f);
      const b = dirOf(d);
      if (a === b) continue;
      if (!folders.has(a)) folders.set(a, new Set());
      folders.get(a)!.add(b);
      if (!why.has(`${a} ${b}`)) why.set(`${a} ${b}`, `${f} → ${d}`);
    }
  const found = cycles(folders).map((loop) => {
    const steps = loop.split(" → ");
    const edges = steps.slice(1).map((b, i) => why.get(`${steps[i]} ${b}`));
    return `${loop} (${edges.join("; ")})`;
  });
  expect(found).toEqual([]);
});

test("the cycle finder reports a cycle as a path and a DAG as none", () => {
  const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
  expect(cycles(g({ a: ["b"], b: ["c"], c: ["a", "d"], d: [] }))).toEqual(["a → b → c → a"]);
  expect(cycles(g({ a: ["a"] }))).toEqual(["a → a"]);
  expect(cycles(g({ a: ["b"], b: ["a", "c"], c: ["b"] }))).toEqual(["a → b → a", "b → c → b"]);
  expect(cycles(g({ a: ["b", "c"], b: ["c"], c: [] }))).toEqual([]);
  expect(cycles(g({ a: ["b"], b: ["a"], c: ["d"], d: ["c"] }))).toEqual(["a → b → a", "c → d → c"]);
});
