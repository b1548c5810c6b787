// Several relay nodes acting as one through NATS JetStream: one `nats-server -js` on a free port
// with a temporary store, and relay processes on loopback, each with its own data directory.
// Events cross nodes live and are stored everywhere once; a node killed mid-stream catches up;
// `okAfter = "stream"` acknowledgements survive the node; NATS itself restarting loses nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Event } from "nostr-tools/pure";
import { getPublicKey } from "nostr-tools/pure";
import { converged, NATS_SERVER, Nats, Node, until } from "./cluster-nodes.ts";
import { newKey, now, RawClient, signed, tempDir } from "./harness.ts";
import { cli } from "./procs.ts";

if (!NATS_SERVER)
  console.log("cluster tests skip: nats-server is not installed (apt-get install nats-server)");

/** The event as it arrives in a frame (nostr-tools marks signed events with a symbol). */
const plain = (e: Event): unknown => JSON.parse(JSON.stringify(e));
const ids = (lines: string[]): string[] => lines.map((l) => (JSON.parse(l) as { id: string }).id).sort();

/** Subscribes and resolves once the stored part is over. */
async function subscribe(url: string, subId: string, filter: object): Promise<RawClient> {
  const c = await RawClient.connect(url);
  c.send(["REQ", subId, filter]);
  await c.next((f) => f[0] === "EOSE" && f[1] === subId, 30_000);
  return c;
}

const delivered = (c: RawClient, subId: string, id: string): number =>
  c.frames.filter((f) => f[0] === "EVENT" && f[1] === subId && (f[2] as { id: string }).id === id).length;

/** Sends events over one connection, `inFlight` at a time; resolves with the ids answered OK true. */
async function sendAll(
  c: RawClient,
  events: Event[],
  onOk?: (n: number) => void | Promise<void>,
): Promise<string[]> {
  const ok: string[] = [];
  for (const e of events) {
    const from = c.frames.length;
    c.send(["EVENT", e]);
    const f = await c.next((x) => x[0] === "OK" && x[1] === e.id, 60_000, from);
    if (f[2] === true) ok.push(e.id);
    await onOk?.(ok.length);
  }
  return ok;
}

describe.skipIf(!NATS_SERVER)("a cluster of relay nodes through NATS JetStream", () => {
  let a: Node;
  let b: Node;
  let c: Node;
  const extra: Node[] = [];
  // Registered before tempDir's removal of dir, so that it runs first (afterAll hooks run in order).
  afterAll(async () => {
    await Promise.all([a, b, c, ...extra].map((n) => n?.kill("SIGKILL")));
    await nats.stop();
  });
  const dir = tempDir("relay-cluster-");
  const nats = new Nats(join(dir, "nats"));

  beforeAll(async () => {
    await nats.start();
    a = new Node("A", join(dir, "a"), nats.url);
    b = new Node("B", join(dir, "b"), nats.url);
    c = new Node("C", join(dir, "c"), nats.url);
    await Promise.all([a.start(), b.start(), c.start()]);
    await until(
      async () => (await Promise.all([a, b, c].map((n) => n.cluster()))).every((m) => m.connected === 1),
      "every node to connect",
    );
  }, 120_000);

  test("an event published to node A is delivered live to subscribers on B and C and stored on all three", async () => {
    const sk = newKey();
    const filter = { authors: [getPublicKey(sk)] };
    const onB = await subscribe(b.url, "live", filter);
    const onC = await subscribe(c.url, "live", filter);
    const pub = await RawClient.connect(a.url);
    const e = signed(sk, { content: "across the cluster" });
    expect(await pub.publish(e)).toEqual(["OK", e.id, true, ""]);
    const want = (f: unknown[]) => f[0] === "EVENT" && f[1] === "live";
    expect((await onB.next(want, 30_000))[2]).toEqual(plain(e));
    expect((await onC.next(want, 30_000))[2]).toEqual(plain(e));
    for (const n of [a, b, c]) {
      const q = await RawClient.connect(n.url);
      expect(await q.req("q", { ids: [e.id] })).toEqual([e.id]);
      q.close();
    }
    for (const x of [onB, onC, pub]) x.close();
  }, 120_000);

  test("events `relay import` adds beside node A reach subscribers on B and C and are stored on all three", async () => {
    const sk = newKey();
    const filter = { authors: [getPublicKey(sk)] };
    const onC = await subscribe(c.url, "imported", filter);
    const events = Array.from({ length: 20 }, (_, i) => signed(sk, { content: `imported ${i}` }));
    const imp = await cli(["import", "-", "--quiet", "--data", join(a.dir, "db")], {
      stdin: events.map((e) => JSON.stringify(e)).join("\n"),
    });
    expect(imp.code).toBe(0);
    const want = new Set(events.map((e) => e.id));
    await until(async () => {
      const got = onC.frames
        .filter((f) => f[0] === "EVENT" && f[1] === "imported")
        .map((f) => (f[2] as Event).id);
      return got.length === want.size && got.every((id) => want.has(id));
    }, "the imported events to reach C's subscriber");
    for (const n of [a, b, c]) {
      const q = await RawClient.connect(n.url);
      await until(
        async () => (await q.req("q", filter)).length === want.size,
        `the imported events on ${n.name}`,
      );
      q.close();
    }
    onC.close();
  }, 120_000);

  test("an ephemeral event sent to A reaches subscribers on B and C and is stored nowhere", async () => {
    const sk = newKey();
    const filter = { authors: [getPublicKey(sk)] };
    const onB = await subscribe(b.url, "eph", filter);
    const onC = await subscribe(c.url, "eph", filter);
    const pub = await RawClient.connect(a.url);
    const e = signed(sk, { kind: 20001, content: "typing" });
    expect(await pub.publish(e)).toEqual(["OK", e.id, true, ""]);
    const want = (f: unknown[]) => f[0] === "EVENT" && f[1] === "eph";
    expect((await onB.next(want, 30_000))[2]).toEqual(plain(e));
    expect((await onC.next(want, 30_000))[2]).toEqual(plain(e));
    for (const n of [a, b, c]) expect(n.export().filter((l) => l.includes(e.id))).toEqual([]);
    for (const x of [onB, onC, pub]) x.close();
  }, 120_000);

  test("the same event sent to A and B at once is stored once everywhere and broadcast once per subscriber", async () => {
    await converged([a, b, c]);
    const before = (await a.cluster()).stream_seq!;
    const sk = newKey();
    const filter = { authors: [getPublicKey(sk)] };
    const subs = await Promise.all([a, b, c].map((n) => subscribe(n.url, "once", filter)));
    const [toA, toB] = await Promise.all([RawClient.connect(a.url), RawClient.connect(b.url)]);
    const e = signed(sk, { content: "sent twice" });
    toA.send(["EVENT", e]);
    toB.send(["EVENT", e]);
    const [okA, okB] = await Promise.all([toA.ok(e.id), toB.ok(e.id)]);
    expect(okA[2]).toBe(true);
    expect(okB[2]).toBe(true);
    await converged([a, b, c]);
    // The stream holds it once: one sequence number more than before.
    expect((await a.cluster()).stream_seq).toBe(before + 1);
    for (const s of subs) expect(delivered(s, "once", e.id)).toBe(1);
    const stored = a.export().filter((l) => l.includes(e.id));
    expect(stored.map((l) => JSON.parse(l))).toEqual([plain(e)]);
    for (const n of [b, c]) expect(n.export().filter((l) => l.includes(e.id))).toEqual(stored);
    for (const x of [...subs, toA, toB]) x.close();
  }, 180_000);

  /** Notes, profile versions, addressable versions and deletions of some notes, by a few authors. */
  function corpus(tag: string, authors = 4, notes = 30): { events: Event[]; expected: Set<string> } {
    const t0 = now() - 600;
    const events: Event[] = [];
    const expected = new Set<string>();
    for (let a = 0; a < authors; a++) {
      const sk = newKey();
      const mine: Event[] = [];
      for (let i = 0; i < notes; i++) {
        const n = signed(sk, { created_at: t0 + i, content: `${tag} note ${a}/${i}` });
        mine.push(n);
        events.push(n);
        if (i % 10 === 3) {
          const p = signed(sk, {
            kind: 0,
            created_at: t0 + i,
            content: JSON.stringify({ name: `${tag}${a}v${i}` }),
          });
          events.push(p);
          const l = signed(sk, {
            kind: 30000,
            created_at: t0 + i,
            tags: [["d", "friends"]],
            content: `v${i}`,
          });
          events.push(l);
        }
        if (i % 10 === 9) {
          // Delete two notes of this round.
          const gone = [mine[i - 5]!, mine[i - 2]!];
          const d = signed(sk, { kind: 5, created_at: t0 + i, tags: gone.map((g) => ["e", g.id]) });
          events.push(d);
          expected.add(d.id);
        }
      }
      const deleted = new Set(
        events
          .filter((e) => e.kind === 5 && e.pubkey === mine[0]!.pubkey)
          .flatMap((e) => e.tags.map((t) => t[1])),
      );
      for (const n of mine) if (!deleted.has(n.id)) expected.add(n.id);
      // The newest versions of the replaceable and addressable events stay.
      const newest = (kind: number) =>
        events
          .filter((e) => e.kind === kind && e.pubkey === mine[0]!.pubkey)
          .sort((x, y) => y.created_at - x.created_at)[0]!;
      expected.add(newest(0).id);
      expected.add(newest(30000).id);
    }
    return { events, expected };
  }

  test("node C killed during a stream of events catches up after a restart, and the exports match", async () => {
    const { events, expected } = corpus("kill");
    const [toA, toB] = await Promise.all([RawClient.connect(a.url), RawClient.connect(b.url)]);
    const half = (k: number) => events.filter((_, i) => i % 2 === k);
    let killed = false;
    let restarted: Promise<void> | undefined;
    const okA = sendAll(toA, half(0), async (n) => {
      if (n === 20 && !killed) {
        killed = true;
        await c.kill("SIGKILL");
      }
      if (n === 45 && !restarted) restarted = c.start();
    });
    const okB = sendAll(toB, half(1));
    const ok = [...(await okA), ...(await okB)];
    expect(killed).toBe(true);
    await restarted;
    await converged([a, b, c]);
    const ea = a.export();
    expect(b.export()).toEqual(ea);
    expect(c.export()).toEqual(ea);
    const sent = new Set(events.map((e) => e.id));
    const mine = ids(ea).filter((id) => sent.has(id));
    expect(mine).toEqual([...expected].sort());
    // Every event acknowledged and not deleted or replaced later is among them.
    for (const id of ok) if (expected.has(id)) expect(mine).toContain(id);
    toA.close();
    toB.close();
  }, 300_000);

  test("NATS stopped and restarted while events flow: nothing is lost and the nodes converge", async () => {
    const { events, expected } = corpus("nats", 3, 30);
    const [toA, toB] = await Promise.all([RawClient.connect(a.url), RawClient.connect(b.url)]);
    const half = (k: number) => events.filter((_, i) => i % 2 === k);
    let stopped = false;
    let restarted: Promise<void> | undefined;
    const okA = sendAll(toA, half(0), async (n) => {
      if (n === 15 && !stopped) {
        stopped = true;
        await nats.stop();
        await until(async () => (await a.cluster()).connected === 0, "A to see NATS gone");
      }
      if (n === 35 && !restarted) restarted = nats.start();
    });
    const okB = sendAll(toB, half(1));
    const ok = [...(await okA), ...(await okB)];
    await restarted;
    // NATS being away never stops a node storing locally: every event that stays was answered
    // OK true (the others are notes deleted or versions replaced before they arrived).
    expect([...expected].filter((id) => !ok.includes(id))).toEqual([]);
    await converged([a, b, c]);
    const ea = a.export();
    expect(b.export()).toEqual(ea);
    expect(c.export()).toEqual(ea);
    const sent = new Set(events.map((e) => e.id));
    const mine = ids(ea).filter((id) => sent.has(id));
    expect(mine).toEqual([...expected].sort());
    toA.close();
    toB.close();
  }, 300_000);

  test("events a node acknowledged while NATS was down reach the others after that node is killed and restarted", async () => {
    await nats.stop();
    await until(async () => (await a.cluster()).connected === 0, "A to see NATS gone");
    const sk = newKey();
    const events = Array.from({ length: 30 }, (_, i) => signed(sk, { content: `offline ${i}` }));
    const pub = await RawClient.connect(a.url);
    // Stored locally and answered; the outbox holds them for the stream.
    expect(await sendAll(pub, events)).toEqual(events.map((e) => e.id));
    pub.close();
    // Killed before it could append them: only the log and the watermark file survive.
    await a.kill("SIGKILL");
    await nats.start();
    await a.start();
    await converged([a, b, c]);
    const want = events.map((e) => e.id).sort();
    for (const n of [b, c]) {
      const have = new Set(ids(n.export()));
      expect(want.filter((id) => have.has(id))).toEqual(want);
    }
    expect(b.export()).toEqual(a.export());
  }, 300_000);

  test("NATS restarted without its store: the nodes set up the stream and their consumers again and carry on", async () => {
    await nats.stop();
    rmSync(nats.dir, { recursive: true, force: true });
    await nats.start();
    const sk = newKey();
    const filter = { authors: [getPublicKey(sk)] };
    const subs = await Promise.all([b, c].map((n) => subscribe(n.url, "fresh", filter)));
    const pub = await RawClient.connect(a.url);
    const e = signed(sk, { content: "after the stream was lost" });
    expect(await pub.publish(e)).toEqual(["OK", e.id, true, ""]);
    for (const s of subs)
      expect((await s.next((f) => f[0] === "EVENT" && f[1] === "fresh", 60_000))[2]).toEqual(plain(e));
    await converged([a, b, c]);
    expect((await a.cluster()).stream_seq).toBe(1);
    for (const x of [...subs, pub]) x.close();
  }, 300_000);

  test('with okAfter = "stream", every event answered OK true is on the other nodes after the node is killed', async () => {
    const stream = ["--cluster.stream", "STRICT"];
    const a2 = new Node("A2", join(dir, "a2"), nats.url, [...stream, "--cluster.okAfter", "stream"]);
    const b2 = new Node("B2", join(dir, "b2"), nats.url, stream);
    const c2 = new Node("C2", join(dir, "c2"), nats.url, stream);
    extra.push(a2, b2, c2);
    await Promise.all([a2.start(), b2.start(), c2.start()]);
    await until(async () => (await a2.cluster()).connected === 1, "A2 to connect");
    const sk = newKey();
    const events = Array.from({ length: 120 }, (_, i) => signed(sk, { content: `strict ${i}` }));
    const pub = await RawClient.connect(a2.url);
    const ok: string[] = [];
    let answered = 0;
    let killed: Promise<void> | undefined;
    const done = new Promise<void>((resolve) => {
      pub.ws.addEventListener("message", (m) => {
        const f = JSON.parse(String(m.data)) as unknown[];
        if (f[0] !== "OK" || killed) return;
        answered++;
        if (f[2] === true) ok.push(f[1] as string);
        // Killed right after the 40th OK true, with later events still in flight.
        if (ok.length === 40 || answered === events.length) {
          killed = a2.kill("SIGKILL");
          resolve();
        }
      });
    });
    // The first half is sent while NATS is away: stored on A2, but not answered OK true until
    // the stream has it (a node answering after its local commit would answer at once).
    await nats.stop();
    await until(async () => (await a2.cluster()).connected === 0, "A2 to see NATS gone");
    for (const e of events.slice(0, 60)) pub.send(["EVENT", e]);
    await until(async () => answered > 0 || (await a2.cluster()).outbox === 60, "A2 to store the first half");
    expect(ok).toEqual([]);
    await nats.start();
    for (const e of events.slice(60)) pub.send(["EVENT", e]);
    await done;
    await killed;
    expect(ok.length).toBeGreaterThan(0);
    await converged([b2, c2]);
    for (const n of [b2, c2]) {
      const have = new Set(ids(n.export()));
      expect(ok.filter((id) => !have.has(id))).toEqual([]);
    }
  }, 300_000);
});
