// The dataset's kind-1 notes as the query and search phases pick them: by index, a few thousand
// picks a run. At a million events they are ~150 MB of text, so a dataset on disk keeps only
// each note's byte offset in its JSONL file and reads the line when it is picked.
import { closeSync, openSync, readSync } from "node:fs";
import type { WireEvent } from "./wire.ts";

export interface NoteList {
  count: number;
  id(i: number): string;
  text(i: number): string;
}

/** Notes held in memory. */
export function listNotes(notes: readonly WireEvent[]): NoteList {
  return { count: notes.length, id: (i) => notes[i]!.id, text: (i) => notes[i]!.content };
}

/** The line that starts at `offset` of an open file, without its newline. */
function lineAt(fd: number, offset: number): string {
  let buf = Buffer.alloc(4096);
  let got = 0;
  for (;;) {
    const n = readSync(fd, buf, got, buf.length - got, offset + got);
    const end = buf.indexOf(10, got);
    got += n;
    if (end >= 0 && end < got) return buf.toString("utf8", 0, end);
    if (n === 0) return buf.toString("utf8", 0, got);
    if (got === buf.length) buf = Buffer.concat([buf, Buffer.alloc(buf.length)]);
  }
}

/** Notes read from `file` at `offsets` (one per note, in dataset order) when asked for. */
export function fileNotes(file: string, offsets: Float64Array): NoteList {
  let fd: number | undefined;
  const read = (i: number): WireEvent => {
    fd ??= openSync(file, "r");
    return JSON.parse(lineAt(fd, offsets[i]!)) as WireEvent;
  };
  // One descriptor for the process's life; closed on exit so a test runner sees no leak.
  process.once("exit", () => fd !== undefined && closeSync(fd));
  return { count: offsets.length, id: (i) => read(i).id, text: (i) => read(i).content };
}
