// Generates a dataset on every core: this thread draws the events in order (templates.ts: content
// and ids depend only on the seed), signing threads (sign-worker.ts) sign chunks of ids, and the
// lines are written in order to the JSONL file as chunks come back. Memory stays bounded: a few
// chunks in flight, plus what the catalog keeps.
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import { CatalogBuilder } from "./catalog.ts";
import type { DatasetFiles, DatasetMeta } from "./files.ts";
import { VERSION } from "./files.ts";
import type { SignDone, SignJob } from "./sign-worker.ts";
import type { DatasetParams, Unsigned } from "./templates.ts";
import { drawAuthors, drawEvents } from "./templates.ts";

const CHUNK = 1000;
/** chunks in flight per signing thread: enough that no thread waits for the next */
const AHEAD = 3;

interface Signing {
  job: SignJob;
  events: Unsigned[];
  done: Promise<SignDone>;
}

/** A signing thread that answers jobs in the order they were posted. */
class SignThread {
  private readonly worker: Worker;
  private readonly waiting: { resolve: (d: SignDone) => void; reject: (e: Error) => void }[] = [];
  readonly ready: Promise<string>;

  constructor(sks: Uint8Array) {
    this.worker = new Worker(new URL("./sign-worker.ts", import.meta.url), {
      workerData: { sks },
      name: "dataset-sign",
    });
    let announced!: (name: string) => void;
    this.ready = new Promise((r) => {
      announced = r;
    });
    this.worker.on("message", (m: SignDone | { signer: string }) => {
      if ("signer" in m) announced(m.signer);
      else this.waiting.shift()?.resolve(m);
    });
    this.worker.on("error", (e: Error) => {
      for (const w of this.waiting.splice(0))
        w.reject(new Error(`dataset signing thread failed: ${e.message}`));
    });
  }

  sign(job: SignJob): Promise<SignDone> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.worker.postMessage(job, [job.ids.buffer as ArrayBuffer, job.who.buffer as ArrayBuffer]);
    });
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

function jobOf(seq: number, events: Unsigned[]): SignJob {
  const ids = new Uint8Array(events.length * 32);
  const who = new Uint32Array(events.length);
  events.forEach((e, i) => {
    ids.set(Buffer.from(e.id, "hex"), i * 32);
    who[i] = e.author;
  });
  return { seq, ids, who };
}

export async function generateDataset(
  p: DatasetParams,
  files: DatasetFiles,
  log: (s: string) => void,
): Promise<DatasetMeta> {
  const started = performance.now();
  const { rng, authors } = drawAuthors(p);
  const sks = new Uint8Array(authors.length * 32);
  authors.forEach((a, i) => {
    sks.set(Buffer.from(a.sk, "hex"), i * 32);
  });
  // This thread draws the events, which is about as much work as a signing thread's at native
  // signing speed; a thread per core keeps noble (15× slower) busy on every core too.
  const threads = Array.from({ length: Math.max(1, availableParallelism()) }, () => new SignThread(sks));
  const signer = await threads[0]!.ready;
  mkdirSync(dirname(files.events), { recursive: true });
  // Written under temporary names and renamed at the end, meta last: an interrupted run leaves
  // nothing that looks like a dataset.
  const tmp = { events: `${files.events}.tmp`, notes: `${files.notes}.tmp`, meta: `${files.meta}.tmp` };
  const out = openSync(tmp.events, "w");
  const catalog = new CatalogBuilder(authors.map((a) => a.pk));
  const offsets: number[] = [];
  let bytes = 0;
  let written = 0;

  const write = (s: Signing, d: SignDone) => {
    const lines: string[] = [];
    s.events.forEach((e, i) => {
      const sig = Buffer.from(d.sigs.subarray(i * 64, i * 64 + 64)).toString("hex");
      const { id, pubkey, created_at, kind, tags, content } = e;
      const line = JSON.stringify({ id, pubkey, created_at, kind, tags, content, sig });
      if (kind === 1) offsets.push(bytes);
      bytes += Buffer.byteLength(line) + 1;
      lines.push(line);
      catalog.add(e);
    });
    writeSync(out, `${lines.join("\n")}\n`);
    written += s.events.length;
    if (Math.floor(written / 100_000) !== Math.floor((written - s.events.length) / 100_000))
      log(`  signed ${written}/${p.events} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  };

  try {
    const queue: Signing[] = [];
    let seq = 0;
    let chunk: Unsigned[] = [];
    const post = async () => {
      const job = jobOf(seq, chunk);
      queue.push({ job, events: chunk, done: threads[seq % threads.length]!.sign(job) });
      seq++;
      chunk = [];
      // Written in order: the oldest chunk is awaited once enough are in flight.
      while (queue.length >= threads.length * AHEAD) {
        const s = queue.shift()!;
        write(s, await s.done);
      }
    };
    for (const e of drawEvents(p, rng, authors)) {
      chunk.push(e);
      if (chunk.length === CHUNK) await post();
    }
    if (chunk.length > 0) await post();
    for (const s of queue) write(s, await s.done);
  } catch (e) {
    rmSync(tmp.events, { force: true });
    throw e;
  } finally {
    closeSync(out);
    await Promise.all(threads.map((t) => t.stop()));
  }

  const meta: DatasetMeta = {
    version: VERSION,
    events: written,
    authors,
    seed: p.seed,
    signedBytes: bytes - written,
    notes: offsets.length,
    signer,
    workers: threads.length,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    catalog: catalog.finish(),
  };
  try {
    await Bun.write(tmp.notes, new Float64Array(offsets));
    await Bun.write(tmp.meta, JSON.stringify(meta));
    renameSync(tmp.events, files.events);
    renameSync(tmp.notes, files.notes);
    renameSync(tmp.meta, files.meta);
  } catch (e) {
    for (const f of Object.values(tmp)) rmSync(f, { force: true });
    throw e;
  }
  return meta;
}
