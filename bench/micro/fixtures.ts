// Deterministic, unsigned events of realistic shape for the micro-benchmarks. Nothing here checks
// signatures, so signing would only slow the benches down; ids are random hex of the right form.
import type { NostrEvent } from "../../src/nostr/event.ts";
import { HASHTAGS, prose, Rng } from "../load/prng.ts";

export const rng = new Rng(42);
export const AUTHORS: string[] = Array.from({ length: 1000 }, () => rng.hex(32));
export const ROOTS: string[] = Array.from({ length: 200 }, () => rng.hex(32));

let serial = 0;

/** One kind-1 note, reply or reaction with e/p/t tags and 50–500 bytes of content. */
export function makeEvent(r: Rng = rng): NostrEvent {
  const kind = r.pick([1, 1, 1, 6, 7]);
  const tags: string[][] = [];
  if (kind !== 1 || r.float() < 0.35) tags.push(["e", r.zipf(ROOTS), "", "root"], ["p", r.zipf(AUTHORS)]);
  if (kind === 1 && r.float() < 0.3) for (const t of r.sample(HASHTAGS, r.int(1, 3))) tags.push(["t", t]);
  serial++;
  return {
    id: r.hex(32),
    pubkey: r.zipf(AUTHORS),
    created_at: 1_700_000_000 + serial,
    kind,
    tags,
    content: kind === 1 ? prose(r, r.int(50, 500)) : kind === 7 ? "+" : "",
    sig: r.hex(64),
  };
}

/** A ring of inputs, so each iteration sees different data and nothing folds to a constant. */
export class Ring<T> {
  private i = 0;
  constructor(readonly items: readonly T[]) {}
  next(): T {
    const x = this.items[this.i]!;
    this.i = (this.i + 1) % this.items.length;
    return x;
  }
}

export const EVENTS: NostrEvent[] = Array.from({ length: 1024 }, () => makeEvent());
