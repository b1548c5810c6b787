// How often the high-impact lists (src/search/impact.ts) would decide a search alone, computed
// offline over a cached dataset's searchable events: the load tool's search phase's queries
// (two words of one note, limit 20), their candidates from the words' high lists, and whether
// the 20th best of those scores above the bound for every other document.
//
//   bun bench/search-impact-sim.ts [dataset meta file] [reference length; default: the average]
//                                  [threshold; default: impact.ts's]
import { idf, termScore } from "../src/search/bm25.ts";
import { analyze } from "../src/search/consumer.ts";
import { boundOutside, isHigh, THRESHOLD } from "../src/search/impact.ts";
import { datasetCatalog, openDataset } from "./load/dataset.ts";
import { readLines } from "./load/lines.ts";
import { buildSearches, SEARCH_LIMIT } from "./load/search.ts";

const d = await openDataset(process.argv[2] ?? ".bench-cache/dataset-v2-e1000000-a20000-s1.json");
const postings = new Map<string, Map<number, number>>(); // token → document → tf
const lengths: number[] = [];
let total = 0;
for await (const lines of readLines(d.files.events))
  for (const line of lines) {
    const doc = analyze(JSON.parse(line));
    if (!doc) continue;
    const i = lengths.length;
    lengths.push(doc.length);
    total += doc.length;
    for (const [t, tf] of doc.terms) {
      let m = postings.get(t);
      if (!m) {
        m = new Map();
        postings.set(t, m);
      }
      m.set(i, tf);
    }
  }
const docs = lengths.length;
const avg = total / docs;
const ref = Number(process.argv[3] ?? avg);
const th = Number(process.argv[4] ?? THRESHOLD);
let high = 0;
let all = 0;
for (const m of postings.values())
  for (const [doc, tf] of m) {
    all++;
    if (isHigh(tf, lengths[doc]!, ref, th)) high++;
  }
const bound = boundOutside(avg, ref, th);
console.log(
  `${docs} documents, average length ${avg.toFixed(1)}, reference ${ref.toFixed(1)}: ` +
    `${((100 * high) / all).toFixed(2)}% of postings high; bound per word ${bound.toFixed(3)}`,
);
const queries = buildSearches(await datasetCatalog(d), 300, 1);
let decided = 0;
let candidates = 0;
let unionSize = 0;
let lookups = 0;
for (const q of queries) {
  const lists = q.search!.split(" ").map((t) => postings.get(t)!);
  const idfs = lists.map((m) => idf(docs, m.size));
  const union = new Set<number>();
  for (const m of lists) for (const [doc, tf] of m) if (isHigh(tf, lengths[doc]!, ref, th)) union.add(doc);
  unionSize += union.size;
  // A document of the union holding every word is a candidate; its score from every word. What
  // the lists alone tell: the score when every word's posting is high, else the most it can be.
  const scores: number[] = [];
  const full: number[] = [];
  const most: number[] = [];
  for (const doc of union) {
    let known = 0;
    let bounded = 0;
    let exact = 0;
    let all = true;
    lists.forEach((l, w) => {
      const tf = l.get(doc);
      if (tf === undefined) all = false;
      else exact += termScore(idfs[w]!, tf, lengths[doc]!, avg);
      if (tf !== undefined && isHigh(tf, lengths[doc]!, ref, th))
        known += termScore(idfs[w]!, tf, lengths[doc]!, avg);
      else bounded += idfs[w]! * bound;
    });
    if (all) scores.push(exact);
    if (bounded === 0) full.push(known);
    else most.push(known + bounded);
  }
  candidates += scores.length;
  const kth = scores.sort((a, b) => b - a)[SEARCH_LIMIT - 1] ?? -1;
  const kthFull = full.sort((a, b) => b - a)[SEARCH_LIMIT - 1] ?? -1;
  lookups += most.filter((x) => x >= kthFull).length;
  if (kth > bound * idfs.reduce((a, b) => a + b, 0)) decided++;
}
console.log(
  `${decided} of ${queries.length} searches decided by the high lists, ${(candidates / queries.length).toFixed(0)} ` +
    `candidates each; union ${(unionSize / queries.length).toFixed(0)}, lookups at most ` +
    `${(lookups / queries.length).toFixed(0)} (documents in some lists that could reach the 20th of those in all)`,
);
