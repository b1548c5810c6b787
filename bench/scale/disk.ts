// What a run left on disk: `du` of the relay's data directory and of its derived indexes
// (data/derived), both as bytes of content (`du -sb`, what the files hold) and as blocks the
// filesystem allocated (`du -sB1`; LMDB files may be sparse, and then the two differ).
import { join } from "node:path";

export interface DiskUse {
  dataBytes?: number;
  derivedBytes?: number;
  dataAllocatedBytes?: number;
  derivedAllocatedBytes?: number;
}

function du(dir: string, apparent: boolean): number | undefined {
  const r = Bun.spawnSync(["du", "-s", apparent ? "-b" : "-B1", dir], { stderr: "ignore" });
  const n = Number(r.stdout.toString().split("\t")[0]);
  return r.exitCode === 0 && Number.isFinite(n) ? n : undefined;
}

export function diskUse(data: string, derivedDir = "derived"): DiskUse {
  const derived = join(data, derivedDir);
  const out: DiskUse = {};
  const set = (k: keyof DiskUse, v: number | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("dataBytes", du(data, true));
  set("derivedBytes", du(derived, true));
  set("dataAllocatedBytes", du(data, false));
  set("derivedAllocatedBytes", du(derived, false));
  return out;
}
