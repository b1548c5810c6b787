// How much of the data directory's disk the data uses, as the disk budget (store.maxDiskGb)
// counts it. LMDB never shrinks a file: pages a removal frees go on its free lists and later
// writes take them again. So the files' lengths say how big the data once was, and what is in
// use now is, for each of data.mdb and derived/data.mdb, the pages up to the newest snapshot's
// last page less the pages its free lists hold. Read from the meta page and the free lists only
// (page-walk.ts walkFreeList), a few pages per file, so it is cheap enough to ask every second.
import { join } from "node:path";
import type { RootDatabase } from "lmdb";
import { inReadTxn, walkFreeList } from "../lmdb/page-walk.ts";
import { DERIVED_DIR } from "./store.ts";
import type { Store } from "./types.ts";

export interface FileUse {
  file: string;
  /** the file's size on disk (page-walk.ts filePagesOf) */
  fileBytes: number;
  /** pages up to the snapshot's last one, less those on the free lists */
  inUse: number;
  /** pages on the free lists, and the file's pages on disk past the snapshot's last page */
  free: number;
  complete: boolean;
}

export interface DiskUse {
  /** both files */
  inUse: number;
  fileBytes: number;
  free: number;
  files: FileUse[];
}

function fileUse(env: RootDatabase, dir: string, file: string): FileUse {
  const f = inReadTxn(env, () => walkFreeList(join(dir, file)));
  const ps = f.pageSize;
  const tail = Math.max(0, f.filePages - f.snapshotPages);
  return {
    file,
    fileBytes: f.filePages * ps,
    inUse: (f.snapshotPages - f.listed) * ps,
    free: (f.listed + tail) * ps,
    complete: f.complete,
  };
}

/** The data's use of the disk now, both environments together. */
export function diskUse(s: Store): DiskUse {
  const files = [fileUse(s.env, s.path, "data.mdb"), fileUse(s.derived, s.path, `${DERIVED_DIR}/data.mdb`)];
  let inUse = 0;
  let fileBytes = 0;
  let free = 0;
  for (const f of files) {
    inUse += f.inUse;
    fileBytes += f.fileBytes;
    free += f.free;
  }
  return { inUse, fileBytes, free, files };
}
