// `relay prune` and `relay stats` on real data directories, as operators run them: the dry run
// lists exactly what the retention rules make due and what the disk budget would evict (in
// eviction order: store.evictFirstKinds first, oldest first, never kinds 0, 3 and 10002) and
// removes nothing; without --dry-run the same events go and the indexes stay consistent;
// `relay stats` shows the budget, the data in use as the budget counts it, and the free pages.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Event } from "nostr-tools/pure";
import { getEventHash } from "nostr-tools/pure";
import { diskUse } from "../../src/store/disk-use.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import { checked } from "../crash-check.ts";
import { now, tempDir } from "../harness.ts";
import { cli } from "../procs.ts";

const A = "a".repeat(64);
const B = "b".repeat(64);

/** Hashed, unsigned events (imported with --no-verify, as one's own dumps are). */
function make(pubkey: string, kind: number, created_at: number, tags: string[][], content: string): Event {
  const e = { pubkey, kind, created_at, tags, content };
  return { ...e, id: getEventHash(e), sig: "00".repeat(64) } as Event;
}

const t = now();
const oldNotes = Array.from({ length: 10 }, (_, i) => make(A, 1, t - 3 * 86400 + i, [], `old note ${i}`));
const newNotes = Array.from({ length: 20 }, (_, i) => make(B, 1, t - 3600 + i, [], `new note ${i}`));
// Ties on created_at: NIP-01 keeps the lowest ids of a tie, so the highest go first.
const reactions = Array.from({ length: 12 }, (_, i) =>
  make(B, 7, t - 7200 + Math.floor(i / 2), [["e", newNotes[0]!.id]], `+${i}`),
);
const profiles = [make(A, 0, t - 10 * 86400, [], '{"name":"a"}'), make(B, 3, t - 10 * 86400, [["p", A]], "")];
const ALL = [...oldNotes, ...newNotes, ...reactions, ...profiles];

/** NIP-01 order reversed: oldest first, and the highest id first among equal created_at. */
const oldestFirst = (es: Event[]): string[] =>
  [...es].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? 1 : -1)).map((e) => e.id);

const RULES = '[{"kinds":[1],"time":86400},{"kinds":[7],"count":5}]';

async function filled(): Promise<string> {
  const dir = tempDir();
  const file = join(dir, "in.jsonl");
  writeFileSync(file, ALL.map((e) => `${JSON.stringify(e)}\n`).join(""));
  const data = join(dir, "data");
  const r = await cli(["import", file, "--no-verify", "--quiet", "--data", data]);
  expect([r.code, r.err]).toEqual([0, ""]);
  return data;
}

const exported = async (data: string): Promise<string[]> =>
  (await cli(["export", "--quiet", "--data", data])).out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as Event).id)
    .sort();

describe("relay prune", () => {
  test("--dry-run lists what the rules and the budget would remove, in order, and removes nothing", async () => {
    const data = await filled();
    // A budget of 1 KiB, far below anything: every evictable event is due, kind 7 first.
    const env = {
      RELAY_RETENTION_RULES: RULES,
      RELAY_STORE_MAX_DISK_GB: String(1024 / 2 ** 30),
      RELAY_STORE_EVICT_FIRST_KINDS: "7",
    };
    const r = await cli(["prune", "--dry-run", "--data", data], { env });
    expect(r.code).toBe(0);
    const lines = r.out.split("\n").filter((l) => l !== "");
    const kept7 = oldestFirst(reactions).slice(7);
    expect(lines).toEqual([
      ...oldestFirst(oldNotes).map((id) => `${id} rule 1`),
      ...oldestFirst(reactions)
        .slice(0, 7)
        .map((id) => `${id} rule 2`),
      ...kept7.map((id) => `${id} budget`),
      ...oldestFirst(newNotes).map((id) => `${id} budget`),
    ]);
    const err = r.err.split("\n");
    expect(err[0]).toBe('rule 1 {"kinds":[1],"time":86400}: 10 of 30 events due (kinds 1)');
    expect(err[1]).toBe('rule 2 {"kinds":[7],"count":5}: 7 of 12 events due (kinds 7)');
    expect(err[2]).toMatch(
      /^budget 0\.0 MiB \(store\.maxDiskGb\), low-water 0\.0 MiB; [\d.]+ MiB in use, [\d.]+ MiB free in [\d.]+ MiB of data files: 25 oldest evictable events due \(about [\d,]+ bytes each\)$/,
    );
    expect(err.slice(3)).toEqual(["dry run: 42 events would be removed; nothing removed", ""]);
    expect(await exported(data)).toEqual(ALL.map((e) => e.id).sort());

    const j = await cli(["prune", "--dry-run", "--json", "--data", data], { env });
    const report = JSON.parse(j.out) as {
      events: { id: string; by: string }[];
      removed: number;
      dryRun: boolean;
    };
    expect(report.events.map((e) => `${e.id} ${e.by}`)).toEqual(lines);
    expect([report.dryRun, report.removed]).toEqual([true, 0]);
  }, 60_000);

  test("without --dry-run it removes exactly what the rules make due, and the indexes stay consistent", async () => {
    const data = await filled();
    const r = await cli(["prune", "--data", data], { env: { RELAY_RETENTION_RULES: RULES } });
    expect(r.code).toBe(0);
    const due = [...oldestFirst(oldNotes), ...oldestFirst(reactions).slice(0, 7)];
    expect(
      r.out
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split(" ")[0]),
    ).toEqual(due);
    expect(r.err).toContain("no disk budget (store.maxDiskGb)");
    expect(r.err).toEndWith("removed 17 events\n");
    const gone = new Set(due);
    expect(await exported(data)).toEqual(
      ALL.map((e) => e.id)
        .filter((id) => !gone.has(id))
        .sort(),
    );
    await checked(data);
    // Run again: nothing more is due.
    const again = await cli(["prune", "--data", data], { env: { RELAY_RETENTION_RULES: RULES } });
    expect([again.code, again.out]).toEqual([0, ""]);
    expect(again.err).toEndWith("removed 0 events\n");
  }, 60_000);

  test("bad input gets one clear line and its exit status", async () => {
    const missing = join(tempDir(), "none");
    const cases: [string[], Record<string, string>, number, string][] = [
      [["prune", "--data", missing], {}, 1, `relay prune: no relay data in ${missing} (no data.mdb)`],
      [["prune", "--nope", "--data", missing], {}, 2, "--nope"],
      [
        ["prune", "--dry-run", "--data", missing],
        { RELAY_RETENTION_RULES: '[{"kinds":[1],"tim":5}]' },
        78,
        "retention.rules (from env): rule 1: unknown field 'tim' (a rule has kinds, time and count)",
      ],
    ];
    for (const [args, env, code, message] of cases) {
      const r = await cli(args, { env });
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code, out: "" });
      expect(r.err).toContain(message);
      expect(r.err.trim().split("\n").length).toBe(1);
    }
  });
});

describe("relay stats", () => {
  test("shows the budget, the data in use as the budget counts it, and the free pages", async () => {
    const data = await filled();
    const env = { RELAY_STORE_MAX_DISK_GB: "0.5" };
    const text = (await cli(["stats", "--data", data], { env })).out;
    expect(text).toMatch(
      /\nbudget {4}512\.0 MiB \(store\.maxDiskGb\), low-water 460\.8 MiB; data in use [\d.]+ [KM]iB, free pages [\d.]+ [KM]iB, data files [\d.]+ [KM]iB\n/,
    );
    const s = JSON.parse((await cli(["stats", "--json", "--data", data], { env })).out) as {
      disk: { budget: number; lowWater: number; inUse: number; free: number; files: number };
    };
    // The same count the relay's budget takes (file pages less free-listed ones), to the byte.
    const store = openStore(data);
    const use = diskUse(store);
    await closeStore(store);
    expect(s.disk).toEqual({
      budget: 2 ** 29,
      lowWater: Math.floor(2 ** 29 * 0.9),
      inUse: use.inUse,
      free: use.free,
      files: use.fileBytes,
    });
    expect(s.disk.inUse + s.disk.free).toBe(s.disk.files);
    const off = (await cli(["stats", "--data", data])).out;
    expect(off).toMatch(/\nbudget {4}none \(store\.maxDiskGb\); data in use /);
  }, 60_000);
});
