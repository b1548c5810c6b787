// What `relay backup` and `relay compact` share: DEST checked and staged in DEST/incomplete/,
// the source copied from one read transaction (safe beside a running relay), the copy opened
// and checked like `relay check` checks the log (plus what the command checks of its own), and
// only a copy that checks out moved to DEST/data.mdb in one rename; one that does not stays in
// the staging directory for inspection (the next run starts over).

import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { RootDatabase } from "lmdb";
import type { Config } from "../../config/schema.ts";
import { holdsData, publishCopy, stagingDir } from "../../lmdb/copy.ts";
import { checkStore } from "../../store/check.ts";
import { closeStore } from "../../store/store.ts";
import type { Store } from "../../store/types.ts";
import { UsageError } from "../args.ts";
import { IoError } from "../output.ts";
import { openExisting } from "./open-store.ts";

export interface StagedCopy<C, V> {
  dest: string;
  /** where the copy is: DEST when it checked out, else the staging directory */
  at: string;
  seconds: number;
  /** events in the copy */
  events: number;
  /** what the copy step returned */
  copied: C;
  /** what the command's own check returned */
  verified: V;
  problems: string[];
}

export async function stagedCopy<C, V>(
  config: Config,
  dest: string | undefined,
  copy: (env: RootDatabase, staging: string) => Promise<C>,
  verify: (copy: Store, copied: C, problems: string[]) => V,
): Promise<StagedCopy<C, V>> {
  if (dest === undefined) throw new UsageError("needs DEST, the directory to write the copy to");
  if (resolve(dest) === resolve(config.data)) throw new UsageError("DEST is the data directory itself");
  const source = openExisting(config.data, config["store.mapSizeGb"]);
  const started = performance.now();
  let staging: string;
  let copied: C;
  try {
    try {
      mkdirSync(dest, { recursive: true });
      if (holdsData(dest)) throw new Error("it already holds a data.mdb");
      staging = stagingDir(dest);
    } catch (e) {
      throw new IoError(`cannot write to ${dest}: ${(e as Error).message}`);
    }
    try {
      copied = await copy(source.env, staging);
    } catch (e) {
      throw new IoError(`copy to ${dest} failed: ${(e as Error).message}`);
    }
  } finally {
    await closeStore(source);
  }
  const seconds = (performance.now() - started) / 1000;
  let store: Store;
  try {
    store = openExisting(staging, config["store.mapSizeGb"]);
  } catch (e) {
    throw new IoError(`the copy in ${dest} does not open: ${(e as Error).message}`);
  }
  const problems: string[] = [];
  let events: number;
  let verified: V;
  try {
    const r = checkStore(store);
    events = r.events;
    for (const [what, f] of r.problems) problems.push(`${what}: ${f.count} (${f.examples[0] ?? ""})`);
    verified = verify(store, copied, problems);
  } finally {
    await closeStore(store);
  }
  const ok = problems.length === 0;
  if (ok) publishCopy(dest);
  else problems.push(`the copy is left in ${staging}, not in ${dest}`);
  return { dest, at: ok ? dest : staging, seconds, events, copied, verified, problems };
}
