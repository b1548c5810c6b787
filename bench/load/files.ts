// Where a dataset lives in the cache and what its meta file holds (dataset.ts reads and writes
// them, generate.ts writes them).
import { join } from "node:path";
import type { StoredCatalog } from "./catalog.ts";
import type { Author, DatasetParams } from "./templates.ts";

/** Bump when the generator or the cache layout changes so stale caches are not reused. */
export const VERSION = 2;

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

export const cacheDir = (root: string): string => join(root, ".bench-cache");

export function datasetFiles(root: string, p: DatasetParams): DatasetFiles {
  const base = join(cacheDir(root), `dataset-v${VERSION}-e${p.events}-a${p.authors}-s${p.seed}`);
  return { events: `${base}.jsonl`, notes: `${base}.notes`, meta: `${base}.json` };
}
