// A JSONL file read in chunks of whole lines, so a million events are never all in memory.
import { open } from "node:fs/promises";

/** The file's lines (without newlines), a chunk of ~`chunkBytes` at a time. */
export async function* readLines(file: string, chunkBytes = 1 << 20): AsyncGenerator<string[]> {
  const fh = await open(file, "r");
  try {
    let carry = Buffer.alloc(0);
    const buf = Buffer.alloc(chunkBytes);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, chunkBytes, null);
      if (bytesRead === 0) break;
      const data =
        carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      const lines: string[] = [];
      let start = 0;
      // A newline byte never occurs inside a multi-byte UTF-8 sequence, so splitting bytes is safe.
      for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, start)) {
        if (nl > start) lines.push(data.toString("utf8", start, nl));
        start = nl + 1;
      }
      carry = Buffer.from(data.subarray(start));
      if (lines.length > 0) yield lines;
    }
    if (carry.length > 0) yield [carry.toString("utf8")];
  } finally {
    await fh.close();
  }
}
