// The load tool's reproducible dataset: authors and signed events drawn from a seeded PRNG
// (templates.ts), signed once on every core (generate.ts) and cached under .bench-cache/ as
// three files per (events, authors, seed):
//   dataset-v2-eN-aA-sS.jsonl   one signed event per line, exactly what follows `["EVENT",`
//   dataset-v2-eN-aA-sS.notes   byte offset of each kind-1 line (float64, little-endian)
//   dataset-v2-eN-aA-sS.json    authors (sk, pk), counts, signer, and the stored catalog;
//                               written last, so its presence means the other two are complete
// A run reads the meta file and streams the JSONL; only the exact search check parses every event.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Catalog, StoredCatalog } from "./catalog.ts";
import { openCatalog } from "./catalog.ts";
import { generateDataset } from "./generate.ts";
import { readLines } from "./lines.ts";
import { fileNotes } from "./notes.ts";
import type { Author, DatasetParams } from "./templates.ts";

export type { Author, DatasetParams } from "./templates.ts";
export { BASE_TIME } from "./templates.ts";

/** Bump when the generator or the cache layout changes so stale caches are not reused. */
export const VERSION = 2;

export interface WireEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/** The meta file. */
export interface DatasetMeta {
  version: number;
  events: number;
  authors: Author[];
  seed: number;
  /** bytes of all events' JSON (the JSONL without its newlines) */
  signedBytes: number;
  /** kind-1 notes (offsets in the .notes file) */
  notes: number;
  /** what signed it, on how many threads, how long generation took */
  signer: string;
  workers: number;
  seconds: number;
  catalog: StoredCatalog;
}

export interface DatasetFiles {
  events: string;
  notes: string;
  meta: string;
}

export interface Dataset extends DatasetMeta {
  files: DatasetFiles;
}

export const cacheDir = (root: string): string => join(root, ".bench-cache");

export function datasetFiles(root: string, p: DatasetParams): DatasetFiles {
  const base = join(cacheDir(root), `dataset-v${VERSION}-e${p.events}-a${p.authors}-s${p.seed}`);
  return { events: `${base}.jsonl`, notes: `${base}.notes`, meta: `${base}.json` };
}

/** The dataset for these parameters, from the cache when present, else generated and cached. */
export async function loadDataset(
  root: string,
  p: DatasetParams,
  log: (s: string) => void,
): Promise<Dataset> {
  const files = datasetFiles(root, p);
  if (!existsSync(files.meta)) {
    log(`dataset: signing ${p.events} events by ${p.authors} authors (seed ${p.seed}); cached for next time`);
    const m = await generateDataset(p, files, log);
    log(`dataset: signed in ${m.seconds.toFixed(1)} s by ${m.workers} × ${m.signer} → ${files.events}`);
    return { ...m, files };
  }
  const m = (await Bun.file(files.meta).json()) as DatasetMeta;
  log(`dataset: ${m.events} events from cache ${files.events}`);
  return { ...m, files };
}

/** A cached dataset from its meta file (`.bench-cache/dataset-v2-….json`). */
export async function openDataset(metaFile: string): Promise<Dataset> {
  const base = metaFile.replace(/\.json$/, "");
  const m = (await Bun.file(metaFile).json()) as DatasetMeta;
  return { ...m, files: { events: `${base}.jsonl`, notes: `${base}.notes`, meta: metaFile } };
}

/** The kind-1 lines' byte offsets. */
export async function noteOffsets(d: Dataset): Promise<Float64Array> {
  return new Float64Array(await Bun.file(d.files.notes).arrayBuffer());
}

/** Every event parsed (~1.5 KB of objects each: fine at 50k, gigabytes at a million). */
export async function readEvents(d: Dataset): Promise<WireEvent[]> {
  const out: WireEvent[] = [];
  for await (const lines of readLines(d.files.events)) for (const l of lines) out.push(JSON.parse(l));
  return out;
}

/** What the phases aim at: the stored catalog, with notes read from the JSONL when picked. */
export async function datasetCatalog(d: Dataset): Promise<Catalog> {
  const pks = d.authors.map((a) => a.pk);
  return openCatalog(d.catalog, pks, fileNotes(d.files.events, await noteOffsets(d)));
}
