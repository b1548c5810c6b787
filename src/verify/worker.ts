// Piscina worker: checks one packed batch (ids with native SHA-256, signatures with the backend the
// main thread chose) and hands the same buffer back, answered in place, without copying it.
import { move, workerData } from "piscina";
import { verifyPacked } from "./batch.ts";
import { type BackendPreference, chooseBackend } from "./select.ts";

export interface VerifyWorkerData {
  preference: BackendPreference;
  path?: string;
}

// Chosen once per thread at load. The main thread passes "native" plus the exact library path it
// loaded (never "auto"), so a thread that cannot get the same backend fails loudly instead of
// silently verifying with a different one.
const { preference, path } = workerData as VerifyWorkerData;
const { backend } = chooseBackend(preference, path);

export default function verifyBatch(batch: Uint8Array): Uint8Array {
  const answered = verifyPacked(batch, backend);
  return move(answered) as unknown as Uint8Array;
}
