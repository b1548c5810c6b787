// REQs while events are being written: with writes in flight, stored reads take turns with
// what the writes hand back to the main thread (ingest/read-turns.ts), and the writer publishes
// a commit as soon as it is visible, before its sync (lmdb/visible.ts). What a client must see
// either way: every event OK'd before its REQ among the stored events, every event once (stored
// before EOSE or live after it, never both, never neither), stored ones newest first.
import { expect, test } from "bun:test";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, now, RawClient, signed, startTestRelay } from "./harness.ts";

test("REQs sent while a stream of EVENTs is written get each event once, stored or live, and every one OK'd before them stored", async () => {
  // One read per turn while writing (the least budget), so that most of these REQs wait.
  const relay = startTestRelay({ "query.turnBudgetUs": "1" });
  const pub = await RawClient.connect(relay.url);
  const reader = await RawClient.connect(relay.url);
  const sk = newKey();
  const author = getPublicKey(sk);
  const N = 300;
  const base = now() - N;
  const events = Array.from({ length: N }, (_, i) =>
    signed(sk, { created_at: base + i, content: `stream ${i}` }),
  );
  const okd = new Set<string>();
  const answer = (e: (typeof events)[number]) =>
    pub.ok(e.id).then((ok) => (ok[2] === true ? okd.add(e.id) : undefined));

  // The stream in six parts, each sent in full before its REQs: three subscriptions opened
  // while that part is being written (a burst, which arrives together: the second and third
  // wait for later turns), each remembering what was OK'd before it was sent; the next part
  // goes once this one is OK'd. So every REQ races with writes in flight, and every one but the
  // last part's has events still to come live, on a machine of any speed (sent all at once,
  // the stream was written in one or two batches on a slow machine, and no REQ came between).
  const subs: { id: string; start: number; okdBefore: string[] }[] = [];
  const PARTS = 6;
  for (let p = 0; p < PARTS; p++) {
    const part = events.slice((p * N) / PARTS, ((p + 1) * N) / PARTS);
    const done = Promise.all(part.map(answer));
    for (const e of part) pub.send(["EVENT", e]);
    for (let i = 0; i < 3; i++) {
      const id = `s${p * 3 + i}`;
      subs.push({ id, start: reader.frames.length, okdBefore: [...okd] });
      reader.send(["REQ", id, { authors: [author] }]);
    }
    await done;
  }
  expect(okd.size).toBe(N);

  const framesOf = (id: string, start: number) => {
    const mine = reader.frames.slice(start).filter((f) => f[1] === id);
    const eose = mine.findIndex((f) => f[0] === "EOSE");
    const ids = (fs: unknown[][]) =>
      fs.filter((f) => f[0] === "EVENT").map((f) => (f[2] as { id: string }).id);
    return { eose, stored: ids(mine.slice(0, Math.max(eose, 0))), live: ids(mine.slice(eose + 1)) };
  };
  // Live deliveries go out before the OKs (at visibility, before the sync); give the socket a moment.
  const deadline = Date.now() + 5000;
  while (
    Date.now() < deadline &&
    subs.some((s) => {
      const f = framesOf(s.id, s.start);
      return f.eose < 0 || f.stored.length + f.live.length < N;
    })
  )
    await Bun.sleep(10);

  const order = new Map(events.map((e, i) => [e.id, i]));
  for (const s of subs) {
    const { eose, stored, live } = framesOf(s.id, s.start);
    expect(eose).toBeGreaterThanOrEqual(0);
    // each event once
    expect(new Set([...stored, ...live]).size).toBe(stored.length + live.length);
    expect(new Set([...stored, ...live])).toEqual(new Set(events.map((e) => e.id)));
    // stored newest first; what was OK'd before the REQ was sent is among them
    const times = stored.map((id) => order.get(id)!);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const storedSet = new Set(stored);
    expect(s.okdBefore.filter((id) => !storedSet.has(id))).toEqual([]);
  }
  // Some subscriptions really did start mid-stream (else the test shows nothing about it).
  const mid = subs.filter((s) => {
    const f = framesOf(s.id, s.start);
    return f.stored.length > 0 && f.live.length > 0;
  });
  expect(mid.length).toBeGreaterThan(0);
  pub.close();
  reader.close();
});
