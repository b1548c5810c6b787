// How much of a search block-max pruning could skip: for the load tool's two-word queries on a
// data directory it filled, each block's best possible BM25 contribution (its highest tf, its
// shortest document) against the score a search must beat at the end (the 56th best: a search
// keeps `limit * 2 + 16` candidates). An upper bound on what pruning saves, since the bar rises
// only as the walk goes. Run on a copy of the directory:
//   bun bench/search-prune-estimate.ts DATA_DIR [dataset meta .json] [queries]

import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { flatten, POSTING_FIELDS, tokenBounds, tokenPrefix } from "../src/search/blocks.ts";
import { idf, termScore } from "../src/search/bm25.ts";
import { parseSearch } from "../src/search/parse.ts";
import { openStore } from "../src/store/store.ts";
import { datasetCatalog, openDataset } from "./load/dataset.ts";
import { buildSearches } from "./load/search.ts";

const data = process.argv[2];
if (!data)
  throw new Error("usage: bun bench/search-prune-estimate.ts DATA_DIR [dataset meta .json] [queries]");
const d = await openDataset(process.argv[3] ?? ".bench-cache/dataset-v2-e50000-a1000-s1.json");
const filters = buildSearches(await datasetCatalog(d), Number(process.argv[4] ?? 300), 1);
const s = openStore(data);
const ix = openConsumers(s, loadConfig({ flags: { data } }), { log: () => {} }).search!;
const snap = ix.snapshot();
const avg = snap.totalLength / snap.docs;

interface Block {
  serial: number[];
  tf: number[];
  len: number[];
}

function blocksOf(token: string): Block[] {
  const out: Block[] = [];
  const { start, end } = tokenBounds(tokenPrefix(token));
  for (const { value } of ix.blocksView.getRange({ start, end })) {
    const flat = flatten(value as Uint8Array);
    const b: Block = { serial: [], tf: [], len: [] };
    for (let at = 0; at < flat.length; at += POSTING_FIELDS) {
      b.serial.push(flat[at]!);
      b.tf.push(flat[at + 1]!);
      b.len.push(flat[at + 2]!);
    }
    out.push(b);
  }
  return out;
}

/** The most a document of block `b` can score for a word of this idf. */
function bound(b: Block, idfValue: number): number {
  let tf = 0;
  let len = Number.POSITIVE_INFINITY;
  for (let k = 0; k < b.tf.length; k++) {
    tf = Math.max(tf, b.tf[k]!);
    len = Math.min(len, b.len[k]!);
  }
  return termScore(idfValue, tf, len, avg);
}

let queries = 0;
let leadPostings = 0;
let leadBlocks = 0;
let both = 0;
let prunable = 0;
let leadSkippable = 0;
for (const f of filters) {
  const words = parseSearch(f.search!).words;
  if (words.length !== 2) continue;
  queries++;
  const ws = words
    .map((w) => ({ df: ix.docFrequency(snap, w), blocks: blocksOf(w) }))
    .sort((a, b) => a.df - b.df);
  const [lead, other] = ws as [(typeof ws)[0], (typeof ws)[0]];
  const idfs = [idf(snap.docs, lead.df), idf(snap.docs, other.df)] as const;
  // The other word's postings by serial: its block, tf and length.
  const at = new Map<number, [number, number, number]>();
  for (let bi = 0; bi < other.blocks.length; bi++) {
    const b = other.blocks[bi]!;
    for (let k = 0; k < b.serial.length; k++) at.set(b.serial[k]!, [bi, b.tf[k]!, b.len[k]!]);
  }
  const otherBound = other.blocks.map((b) => bound(b, idfs[1]));
  const maxOther = Math.max(...otherBound);
  const found: { score: number; bound: number }[] = [];
  const leadBounds: number[] = [];
  for (const b of lead.blocks) {
    const ub = bound(b, idfs[0]);
    leadBounds.push(ub);
    for (let k = 0; k < b.serial.length; k++) {
      const o = at.get(b.serial[k]!);
      if (!o) continue;
      const score = termScore(idfs[0], b.tf[k]!, b.len[k]!, avg) + termScore(idfs[1], o[1], o[2], avg);
      found.push({ score, bound: ub + otherBound[o[0]]! });
    }
    leadPostings += b.serial.length;
  }
  leadBlocks += lead.blocks.length;
  both += found.length;
  const bar = found.map((x) => x.score).sort((a, b) => b - a)[Math.min(55, found.length - 1)] ?? 0;
  prunable += found.filter((x) => x.bound < bar).length;
  lead.blocks.forEach((b, i) => {
    if (leadBounds[i]! + maxOther < bar) leadSkippable += b.serial.length;
  });
}
console.log(
  JSON.stringify({
    queries,
    leadPostingsPerQuery: Math.round(leadPostings / queries),
    leadBlocksPerQuery: +(leadBlocks / queries).toFixed(1),
    documentsWithBothPerQuery: Math.round(both / queries),
    prunableShareOfThose: prunable / both,
    skippableShareOfLeadPostings: leadSkippable / leadPostings,
  }),
);
process.exit(0);
