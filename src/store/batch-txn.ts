// One batch's transaction: a single LMDB write transaction and commit for every event and task
// of the batch. It first reads what other processes committed since this writer's last look
// (when it follows them), and tells when a fresh read sees it (visible.ts), which may come
// before the commit's promise resolves: the batch is published then, and answered once durable.
import type { Visibility } from "../lmdb/visible.ts";
import type { Reject } from "../wire/reasons.ts";
import type { ApplyRules } from "./apply-event.ts";
import { applyEvent } from "./apply-event.ts";
import type { Pending } from "./batch.ts";
import type { Others } from "./others.ts";
import { othersSince } from "./others.ts";
import type { Removal } from "./removals.ts";
import type { HighWater } from "./serials.ts";
import { commitTxn, readHighWater } from "./serials.ts";
import type { Store } from "./types.ts";

/** One batch's transaction as it goes: filled in by its body, read once it is visible. */
export interface Txn {
  /** the log's marks the transaction opened with */
  marks: HighWater;
  /** what other processes committed before it, when following them */
  others: Others | undefined;
  /** what the batch removed (replaced, deleted, vanished) */
  removed: Removal[];
  commit: Promise<void>;
  /** resolves once a fresh read sees the transaction, which may precede `commit` */
  visible: Promise<void>;
}

export interface TxnOptions {
  /** every event of the batch gets this refusal (its tasks still run) */
  refusing: Reject | undefined;
  rules: ApplyRules;
  /** the marks the writer last handed on, when it follows other processes */
  known: HighWater | undefined;
  visibility: Visibility;
}

const noop = (): void => {};

export function batchTxn(s: Store, batch: Pending[], o: TxnOptions): Txn {
  let shown!: () => void;
  let unwatch = noop;
  const t: Txn = {
    marks: { serial: s.lastSerial, removal: s.lastRemoval },
    others: undefined,
    removed: [],
    visible: new Promise<void>((r) => (shown = r)),
    commit: Promise.resolve(),
  };
  t.commit = commitTxn(s, (before) => {
    s.arena.reset();
    s.removedInTxn = [];
    t.marks = { ...before };
    t.others = o.known ? othersSince(s, o.known, before) : undefined;
    // This transaction only hands on a chunk of other processes' events: its own batch waits
    // for the one that reads the rest (its serials must follow theirs).
    if (t.others?.more) return;
    try {
      applyBatch(s, batch, o.refusing, o.rules);
    } finally {
      t.removed = s.removedInTxn;
      s.removedInTxn = [];
      // Published early only once a fresh read sees this transaction's marks.
      const through = { serial: s.lastSerial, removal: s.lastRemoval };
      unwatch = o.visibility.whenVisible(shown, () => {
        const h = readHighWater(s);
        return h.serial >= through.serial && h.removal >= through.removal;
      });
    }
  });
  // Its watch ends with it (resolved or failed): a later report is another transaction's.
  t.commit.then(
    () => unwatch(),
    () => unwatch(),
  );
  return t;
}

/** Runs inside the write transaction: each event's rules, each task. */
function applyBatch(s: Store, batch: Pending[], refusing: Reject | undefined, rules: ApplyRules): void {
  for (const p of batch) {
    if (p.type === "event")
      p.outcome = refusing ? { status: "rejected", reject: refusing } : applyEvent(s, p.event, p.json, rules);
    else
      try {
        p.result = p.run(s);
      } catch (e) {
        p.failed = e ?? new Error("task failed");
      }
  }
}
