// Generates the load tool's dataset into .bench-cache/ (or says where the cached one is), with
// the same defaults as bench/run.ts, so a scale run's million events can be signed ahead of it:
//   bun bench/dataset.ts --events 1000000 --authors 20000 [--seed 1]     (or --scale)
import { join } from "node:path";
import { parseBenchArgs, USAGE } from "./load/args.ts";
import { loadDataset } from "./load/dataset.ts";

const ROOT = join(import.meta.dir, "..");
const a = parseBenchArgs([...process.argv.slice(2), "--skip-micro"]);
if (a === "help") {
  console.log(`usage: bun bench/dataset.ts [--events N] [--authors N] [--seed N] [--scale]\n\n${USAGE}`);
  process.exit(0);
}
const d = await loadDataset(ROOT, { events: a.events, authors: a.authors, seed: a.seed }, console.error);
const { files } = d;
const size = Bun.file(files.events).size;
console.log(
  `${d.events} events by ${d.authors.length} authors (seed ${d.seed}), ${d.notes} notes, ` +
    `${(size / 2 ** 30).toFixed(2)} GiB; signed by ${d.workers} × ${d.signer} in ${d.seconds} s\n` +
    `  ${files.events}\n  ${files.notes}\n  ${files.meta}`,
);
