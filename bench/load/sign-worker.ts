// A dataset signing thread (generate.ts): gets the authors' secret keys once, then chunks of
// event ids with the author of each, and answers each chunk with its signatures in order.
import { parentPort, workerData } from "node:worker_threads";
import { makeSigner } from "./signer.ts";

export interface SignJob {
  seq: number;
  /** 32 bytes per event */
  ids: Uint8Array;
  /** author index per event */
  who: Uint32Array;
}

export interface SignDone {
  seq: number;
  /** 64 bytes per event */
  sigs: Uint8Array;
}

const signer = makeSigner(workerData.sks as Uint8Array);
parentPort!.postMessage({ signer: signer.name });
parentPort!.on("message", (job: SignJob) => {
  const n = job.who.length;
  const sigs = new Uint8Array(n * 64);
  for (let i = 0; i < n; i++) signer.sign(job.ids.subarray(i * 32, i * 32 + 32), job.who[i]!, sigs, i * 64);
  parentPort!.postMessage({ seq: job.seq, sigs } satisfies SignDone, [sigs.buffer as ArrayBuffer]);
});
