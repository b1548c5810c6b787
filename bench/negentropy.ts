// NIP-77 on the relay, measured: gathering a filter's items from the index (ids read from the
// stored JSON at its fixed offset, against parsing each body), and answering a client with our
// responder over prefix-summed storage against nostr-tools' codec over its vector storage.
// 100,000 events, the client missing 3 and holding 4 the relay lacks.
// `bun bench/negentropy.ts`
import { rmSync } from "node:fs";
import { nip77 } from "nostr-tools";
import { loadConfig } from "../src/config/load.ts";
import { MergedScan } from "../src/indexes/cursor.ts";
import { indexSnapshot } from "../src/indexes/indexes.ts";
import { collectItems } from "../src/indexes/neg-items.ts";
import { computeId, storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { PackedStorage, Responder, sortItems } from "../src/nostr/negentropy.ts";
import { startRelay } from "../src/relay.ts";
import { kindBytes, serialKey } from "../src/store/keys.ts";
import { Gen } from "../test/gen.ts";
import { tempDir } from "../test/harness.ts";

const { Negentropy, NegentropyStorageVector } = nip77;
const N = 100_000;
const g = new Gen(1);
const dir = tempDir("bench-neg-");
const relay = startRelay(loadConfig({ flags: { port: "0", data: dir } }));
const s = relay.ctx.store;
const pk = g.hex(64);
const events: NostrEvent[] = [];
for (let i = 0; i < N; i++) {
  const e = {
    pubkey: pk,
    kind: 1,
    created_at: 1_600_000_000 + Math.floor(i / 3),
    tags: [],
    content: `note ${i} ${g.hex(40)}`,
    id: "",
    sig: "0".repeat(128),
  };
  e.id = computeId(e);
  events.push(e);
}
for (let i = 0; i < N; i += 5000)
  await relay.ctx.writer.submitMany(
    events.slice(i, i + 5000).map((event) => ({ event, json: storedJson(event) })),
  );
while (indexSnapshot(s).through < s.lastSerial) await Bun.sleep(50);

const time = async <T>(label: string, f: () => T | Promise<T>, runs = 5): Promise<T> => {
  let best = Number.POSITIVE_INFINITY;
  let out: T | undefined;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    out = await f();
    best = Math.min(best, performance.now() - t);
  }
  console.log(`${label.padEnd(62)} ${best.toFixed(1).padStart(7)} ms`);
  return out!;
};

console.log(`items of {kinds:[1]} over ${N} stored events (best of 5)`);
await time("index scan only (created_at, serial)", () => {
  let n = 0;
  const scan = new MergedScan(s.kind, [kindBytes(1)], 0, Number.MAX_SAFE_INTEGER, 1024, "oldest");
  for (let k = scan.next(); k; k = scan.next()) n++;
  return n;
});
await time("index scan + body read, id from its fixed offset (collectItems)", () =>
  collectItems(s, [{ kinds: [1] }], { hwm: Number.MAX_SAFE_INTEGER, yieldEvery: 1 << 30, maxItems: 1 << 30 }),
);
await time("index scan + body copy and JSON.parse for the id", () => {
  const scan = new MergedScan(s.kind, [kindBytes(1)], 0, Number.MAX_SAFE_INTEGER, 1024, "oldest");
  const out: string[] = [];
  for (let k = scan.next(); k; k = scan.next())
    out.push((JSON.parse(s.events.getBinary(serialKey(k.serial))!.toString("utf8")) as NostrEvent).id);
  return out.length;
});
const items = await collectItems(s, [{ kinds: [1] }], {
  hwm: Number.MAX_SAFE_INTEGER,
  yieldEvery: 1 << 30,
  maxItems: 1 << 30,
});
if (items === undefined || items === "too-many") throw new Error("no items");

console.log(`\nreconciling ${N} items, client missing 3 and holding 4 extra`);
const client = new NegentropyStorageVector();
const missing = new Set([5, 50_000, 99_998]);
for (let i = 0; i < N; i++) if (!missing.has(i)) client.insert(events[i]!.created_at, events[i]!.id);
for (let i = 0; i < 4; i++) client.insert(1_600_000_000 + 10_000 * (i + 1), g.hex(64));
client.seal();

const ours = await time("ours: sort + prefix sums (PackedStorage)", () => {
  const sorted = sortItems(items.times, items.ids);
  return new PackedStorage(sorted.times, sorted.ids);
});
const theirs = await time("nostr-tools: insert (hex) + seal (NegentropyStorageVector)", () => {
  const v = new NegentropyStorageVector();
  for (const e of events) v.insert(e.created_at, e.id);
  v.seal();
  return v;
});

async function session(label: string, answer: (msg: string) => string): Promise<void> {
  let serverMs = 0;
  let rounds = 0;
  const need: string[] = [];
  const have: string[] = [];
  const neg = new Negentropy(client, 60_000);
  let msg: string | null = neg.initiate();
  while (msg !== null) {
    const t = performance.now();
    const reply = answer(msg);
    serverMs += performance.now() - t;
    rounds++;
    msg = neg.reconcile(
      reply,
      (id) => have.push(id),
      (id) => need.push(id),
    );
  }
  console.log(
    `${label.padEnd(62)} ${serverMs.toFixed(1).padStart(7)} ms  (${rounds} rounds, have ${have.length}, need ${need.length})`,
  );
}
for (let r = 0; r < 3; r++) {
  const responder = new Responder(ours, 60_000);
  await session("ours: Responder, relay's time for the whole session", (m) => responder.reconcile(m));
  const codec = new Negentropy(theirs, 60_000);
  await session(
    "nostr-tools: Negentropy as responder (wrong at id lists)",
    (m) => codec.reconcile(m) ?? "61",
  );
}
await relay.stop();
rmSync(dir, { recursive: true, force: true });
