// What the writer takes in and hands back: the events and tasks of one batch, their outcomes, and
// the answer to each submitter once the batch is on disk (or could not be flushed).
import type { NostrEvent } from "../nostr/event.ts";
import type { Reject } from "../wire/reasons.ts";
import { error } from "../wire/reasons.ts";
import type { Store } from "./types.ts";

/** The start of every refusal for lack of room (after `error: `). */
export const FULL = "storage full: ";

export type WriteOutcome =
  | { status: "stored"; serial: number; replaced: boolean }
  | { status: "duplicate" }
  | { status: "rejected"; reject: Reject };

export interface Committed {
  event: NostrEvent;
  json: string;
  serial: number;
}

/** An event to store and its stored JSON. */
export interface ToWrite {
  event: NostrEvent;
  json: string;
}

/** Events submitted together, answered together once every one of them is on disk. */
export interface Group {
  outcomes: WriteOutcome[];
  left: number;
  resolve: (o: WriteOutcome[]) => void;
}

export type Pending =
  | {
      type: "event";
      event: NostrEvent;
      json: string;
      group: Group;
      index: number;
      outcome?: WriteOutcome;
    }
  | {
      type: "task";
      run: (s: Store) => unknown;
      resolve: (v: unknown) => void;
      reject: (e: unknown) => void;
      result?: unknown;
      failed?: unknown;
    };

/** What bounds the writer from outside before each batch (consumers/backlog.ts). */
export type BacklogState =
  /** room: write */
  | undefined
  /** full: write once this resolves */
  | Promise<void>
  /** full, and it cannot drain (the consumers' disk is full): refuse events for this reason */
  | { refuse: string; full: boolean };

/** Takes up to `max` tasks out of `queue`, ahead of its events, which stay in their order. */
export function takeTasks(queue: Pending[], max: number): Pending[] {
  const tasks: Pending[] = [];
  let w = 0;
  for (const p of queue) {
    if (p.type === "task" && tasks.length < max) tasks.push(p);
    else queue[w++] = p;
  }
  queue.length = w;
  return tasks;
}

/** Every event of the batch gets `reject`; its tasks run in the transaction all the same. */
export function refuseAll(batch: Pending[], reject: Reject): void {
  for (const p of batch) if (p.type === "event") p.outcome = { status: "rejected", reject };
}

/** Nothing of the batch was stored: its events get `reject`, its tasks fail with `cause`. */
export function failAll(batch: Pending[], reject: Reject, cause: unknown): void {
  for (const p of batch) {
    if (p.type === "event") p.outcome = { status: "rejected", reject };
    else p.failed = cause;
  }
}

/** How many events of the batch were refused for lack of room. */
export function refusedFull(batch: Pending[]): number {
  let n = 0;
  for (const p of batch)
    if (p.type === "event" && p.outcome?.status === "rejected" && p.outcome.reject.message.startsWith(FULL))
      n++;
  return n;
}

/**
 * Answers every submitter of a batch that is on disk. When its flush to disk failed
 * (`flushFailed`), what it stored is not acknowledged: those events get `error:`.
 */
export function answer(batch: Pending[], flushFailed?: unknown): void {
  const failed = flushFailed !== undefined;
  const notOnDisk = error(`could not flush to disk: ${(flushFailed as Error | undefined)?.message}`);
  for (const p of batch) {
    if (p.type === "task") {
      if (p.failed !== undefined) p.reject(p.failed);
      else if (failed) p.reject(flushFailed);
      else p.resolve(p.result);
    } else {
      const g = p.group;
      let o: WriteOutcome = p.outcome ?? { status: "rejected", reject: error("not written") };
      if (failed && o.status === "stored") o = { status: "rejected", reject: notOnDisk };
      g.outcomes[p.index] = o;
      if (--g.left === 0) g.resolve(g.outcomes);
    }
  }
}
