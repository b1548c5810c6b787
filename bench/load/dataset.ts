// The load tool's reproducible dataset: authors and signed events drawn from a seeded PRNG
// (templates.ts), signed once on every core (generate.ts) and cached under .bench-cache/ as
// three files per (events, authors, seed):
//   dataset-v2-eN-aA-sS.jsonl   one signed event per line, exactly what follows `["EVENT",`
//   dataset-v2-eN-aA-sS.notes   byte offset of each kind-1 line (float64, little-endian)
//   dataset-v2-eN-aA-sS.json    authors (sk, pk), counts, signer, and the stored catalog;
//                               written last, so its presence means the other two are complete
// A run reads the meta file and streams the JSONL; only the exact search check parses every event.
import { existsSync } from "node:fs";
import type { Catalog } from "./catalog.ts";
import { openCatalog } from "./catalog.ts";
import type { DatasetFiles, DatasetMeta } from "./files.ts";
import { datasetFiles } from "./files.ts";
import { generateDataset } from "./generate.ts";
import { readLines } from "./lines.ts";
import { fileNotes } from "./notes.ts";
import type { DatasetParams } from "./templates.ts";
import type { WireEvent } from "./wire.ts";

export type { DatasetFiles, DatasetMeta } from "./files.ts";
export { cacheDir, datasetFiles, VERSION } from "./files.ts";
export type { Author, DatasetParams } from "./templates.ts";
export { BASE_TIME } from "./templates.ts";
export type { WireEvent } from "./wire.ts";

export interface Dataset extends DatasetMeta {
  files: DatasetFiles;
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
