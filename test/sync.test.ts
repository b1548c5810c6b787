// `relay sync` as operators run it: a real process reconciling a data directory with one of our
// relays over NIP-77, in each direction and both, narrowed by a filter, and through NIP-42 AUTH.
// Convergence is checked on `relay export` of both sides, compared as sorted lines.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import type { TestRelay } from "./harness.ts";
import { newKey, now, RawClient, signed, startTestRelay, tempDir } from "./harness.ts";
import { cli } from "./procs.ts";

const dir = (): string => tempDir("relay-sync-");
// Asynchronous: the remote relay runs in this process and must answer meanwhile.
const relay = (args: string[], stdin?: string) => cli(args, { stdin });

const jsonl = (es: readonly NostrEvent[]) => es.map((e) => JSON.stringify(e)).join("\n");
/** What `relay export` prints for these events: the stored JSON, one per line, sorted. */
const exported = (es: readonly NostrEvent[]) => es.map(storedJson).sort();
const sortedLines = (s: string) =>
  s
    .split("\n")
    .filter((l) => l !== "")
    .sort();

async function exportOf(data: string): Promise<string[]> {
  const r = await relay(["export", "--data", data]);
  expect(r.code).toBe(0);
  return sortedLines(r.out);
}

/** A data directory holding these events, written by `relay import`. */
async function localWith(events: readonly NostrEvent[]): Promise<string> {
  const d = dir();
  const r = await relay(["import", "--quiet", "--data", d, "-"], jsonl(events));
  expect(r.code).toBe(0);
  return d;
}

async function publishAll(r: TestRelay, events: readonly NostrEvent[]): Promise<void> {
  const c = await RawClient.connect(r.url);
  for (const e of events) expect((await c.publish(e))[2]).toBe(true);
  c.close();
}

interface Summary {
  have: number;
  need: number;
  received: number;
  sent: number;
  refused: number;
  skipped: number;
  rounds: number;
}

function makeSets() {
  const t = now() - 3600;
  const a = newKey();
  const b = newKey();
  const mk = (sk: Uint8Array, n: number, kind: number, from: number) =>
    Array.from({ length: n }, (_, i) =>
      signed(sk, { kind, created_at: t + from + i, content: `${kind}/${from + i}` }),
    );
  const shared = [...mk(a, 20, 1, 0), signed(a, { kind: 0, created_at: t, content: "{}" })];
  const onlyRemote = [...mk(a, 15, 1, 100), ...mk(b, 5, 7, 200)];
  const onlyLocal = [
    ...mk(b, 12, 1, 300),
    ...mk(a, 3, 30023, 400).map((_, i) =>
      signed(a, { kind: 30023, created_at: t + 400 + i, tags: [["d", `post-${i}`]], content: "long form" }),
    ),
  ];
  return { shared, onlyRemote, onlyLocal };
}

describe("relay sync", () => {
  test("down: the local store gains exactly what only the remote had; the remote is unchanged", async () => {
    const { shared, onlyRemote, onlyLocal } = makeSets();
    const remote = startTestRelay();
    await publishAll(remote, [...shared, ...onlyRemote]);
    const local = await localWith([...shared, ...onlyLocal]);
    const before = await exportOf(remote.dir);
    const r = await relay(["sync", remote.url, "--data", local, "--json", "--quiet"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out) as Summary;
    expect(s).toMatchObject({
      have: onlyLocal.length,
      need: onlyRemote.length,
      received: onlyRemote.length,
      sent: 0,
      refused: 0,
    });
    expect(await exportOf(local)).toEqual(exported([...shared, ...onlyRemote, ...onlyLocal]));
    expect(await exportOf(remote.dir)).toEqual(before);
    // Again: nothing left to fetch.
    const again = JSON.parse(
      (await relay(["sync", remote.url, "--data", local, "--json", "--quiet"])).out,
    ) as Summary;
    expect(again).toMatchObject({ need: 0, received: 0 });
  }, 60_000);

  test("down into a directory a relay serves: the relay serves what sync adds, live subscribers included", async () => {
    const { shared, onlyRemote, onlyLocal } = makeSets();
    const remote = startTestRelay();
    await publishAll(remote, [...shared, ...onlyRemote]);
    const localDir = await localWith([...shared, ...onlyLocal]);
    const local = startTestRelay({}, localDir);
    const sub = await RawClient.connect(local.url);
    sub.send(["REQ", "live", { limit: 0 }]);
    await sub.next((f) => f[0] === "EOSE" && f[1] === "live");
    const r = await relay(["sync", remote.url, "--data", localDir, "--json", "--quiet"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out) as Summary).toMatchObject({
      need: onlyRemote.length,
      received: onlyRemote.length,
    });
    // The relay notices the other process's commits within about a second and fans them out.
    const want = new Set(onlyRemote.map((e) => e.id));
    const seen = new Set<string>();
    const until = Date.now() + 20_000;
    while (seen.size < want.size && Date.now() < until) {
      for (const f of sub.frames)
        if (f[0] === "EVENT" && f[1] === "live") seen.add((f[2] as { id: string }).id);
      await Bun.sleep(50);
    }
    expect([...seen].sort()).toEqual([...want].sort());
    const c = await RawClient.connect(local.url);
    const ids = await c.req("all", { limit: 1000 });
    expect(ids.sort()).toEqual([...shared, ...onlyRemote, ...onlyLocal].map((e) => e.id).sort());
    c.close();
    sub.close();
  }, 60_000);

  test("up: the remote accepts exactly what only the local store had", async () => {
    const { shared, onlyRemote, onlyLocal } = makeSets();
    const remote = startTestRelay();
    await publishAll(remote, [...shared, ...onlyRemote]);
    const local = await localWith([...shared, ...onlyLocal]);
    const r = await relay(["sync", remote.url, "--data", local, "--dir", "up", "--json", "--quiet"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out) as Summary).toMatchObject({
      have: onlyLocal.length,
      need: onlyRemote.length,
      received: 0,
      sent: onlyLocal.length,
      refused: 0,
    });
    expect(await exportOf(remote.dir)).toEqual(exported([...shared, ...onlyRemote, ...onlyLocal]));
    expect(await exportOf(local)).toEqual(exported([...shared, ...onlyLocal]));
  }, 60_000);

  test("both: the two stores converge to the same events", async () => {
    const { shared, onlyRemote, onlyLocal } = makeSets();
    const remote = startTestRelay();
    await publishAll(remote, [...shared, ...onlyRemote]);
    const local = await localWith([...shared, ...onlyLocal]);
    const r = await relay(["sync", remote.url, "--data", local, "--dir", "both"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`  received  ${String(onlyRemote.length).padStart(9)}`);
    expect(r.out).toContain(`  sent      ${String(onlyLocal.length).padStart(9)}`);
    expect(r.err).toContain("reconciled in ");
    const theirs = await exportOf(remote.dir);
    expect(await exportOf(local)).toEqual(theirs);
    expect(theirs.length).toBe(shared.length + onlyRemote.length + onlyLocal.length);
  }, 60_000);

  test("--filter narrows what is reconciled and moved", async () => {
    const { shared, onlyRemote, onlyLocal } = makeSets();
    const remote = startTestRelay();
    await publishAll(remote, [...shared, ...onlyRemote]);
    const local = await localWith([...shared, ...onlyLocal]);
    const r = await relay([
      "sync",
      remote.url,
      "--data",
      local,
      "--dir",
      "both",
      "--filter",
      '{"kinds":[7]}',
      "--json",
      "--quiet",
    ]);
    expect(r.code).toBe(0);
    const kind7 = onlyRemote.filter((e) => e.kind === 7);
    expect(JSON.parse(r.out) as Summary).toMatchObject({
      have: 0,
      need: kind7.length,
      received: kind7.length,
      sent: 0,
    });
    expect(await exportOf(local)).toEqual(exported([...shared, ...onlyLocal, ...kind7]));
  }, 60_000);

  test("a remote that asks for AUTH: refused without a key (exit 1), synced with --nsec-file", async () => {
    const { shared, onlyRemote } = makeSets();
    const remote = startTestRelay({ "auth.reads": "true" });
    await publishAll(remote, [...shared, ...onlyRemote]);
    const local = await localWith(shared);
    const denied = await relay(["sync", remote.url, "--data", local, "--quiet"]);
    expect(denied.code).toBe(1);
    expect(denied.err).toContain("NEG-ERR auth-required: ");
    const keyFile = join(dir(), "key");
    writeFileSync(keyFile, Buffer.from(newKey()).toString("hex"));
    const r = await relay(["sync", remote.url, "--data", local, "--nsec-file", keyFile, "--json", "--quiet"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out) as Summary).toMatchObject({
      need: onlyRemote.length,
      received: onlyRemote.length,
    });
  }, 60_000);

  test("bad arguments and an unreachable remote get their exit codes", async () => {
    const local = dir();
    expect((await relay(["sync", "ws://127.0.0.1:1", "--data", local, "--dir", "sideways"])).code).toBe(2);
    expect((await relay(["sync", "--data", local])).code).toBe(2);
    expect((await relay(["sync", "ws://127.0.0.1:1", "--data", local, "--filter", "{"])).code).toBe(2);
    const down = await relay(["sync", "ws://127.0.0.1:1", "--data", local, "--timeout", "5"]);
    expect(down.code).toBe(1);
    expect(down.err).toStartWith("relay sync: ws://127.0.0.1:1/: ");
  }, 60_000);
});
