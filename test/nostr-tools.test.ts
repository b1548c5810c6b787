// nostr-tools as a real client: Relay and SimplePool publish, query and stream against us.
import { describe, expect, test } from "bun:test";
import { SimplePool } from "nostr-tools/pool";
import { getPublicKey } from "nostr-tools/pure";
import { Relay } from "nostr-tools/relay";
import { newKey, now, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay();

describe("nostr-tools", () => {
  test("Relay publishes and subscribes, getting stored events then EOSE then live ones", async () => {
    const r = await Relay.connect(relay.url);
    const sk = newKey();
    const first = signed(sk, { created_at: now() - 10, content: "first" });
    expect(await r.publish(first)).toBe("");
    const got: string[] = [];
    let eose = false;
    const live = Promise.withResolvers<void>();
    const sub = r.subscribe([{ authors: [getPublicKey(sk)] }], {
      onevent: (e) => {
        got.push(e.id);
        if (eose) live.resolve();
      },
      oneose: () => {
        eose = true;
      },
    });
    while (!eose) await Bun.sleep(5);
    expect(got).toEqual([first.id]);
    const second = signed(sk, { content: "second" });
    await r.publish(second);
    await live.promise;
    expect(got).toEqual([first.id, second.id]);
    sub.close();
    r.close();
  });

  test("SimplePool publishes, queries with querySync and streams with subscribe", async () => {
    const pool = new SimplePool();
    const sk = newKey();
    const pk = getPublicKey(sk);
    const notes = Array.from({ length: 5 }, (_, i) =>
      signed(sk, { created_at: now() - 100 + i, content: `n${i}` }),
    );
    for (const e of notes) await Promise.all(pool.publish([relay.url], e));
    const found = await pool.querySync([relay.url], { authors: [pk], limit: 3 });
    expect(found.map((e) => e.id).sort()).toEqual(
      notes
        .slice(2)
        .map((e) => e.id)
        .sort(),
    );
    const one = await pool.get([relay.url], { ids: [notes[0]!.id] });
    expect(one?.id).toBe(notes[0]!.id);

    const streamed = Promise.withResolvers<string>();
    const sub = pool.subscribe(
      [relay.url],
      { authors: [pk], limit: 0 },
      { onevent: (e) => streamed.resolve(e.id) },
    );
    await Bun.sleep(50);
    const fresh = signed(sk, { content: "fresh" });
    await Promise.all(pool.publish([relay.url], fresh));
    expect(await streamed.promise).toBe(fresh.id);
    sub.close();
    pool.close([relay.url]);
  });

  test("a refused event rejects the publish promise with the relay's reason", async () => {
    const r = await Relay.connect(relay.url);
    const e = signed(newKey(), { created_at: now() + 7200 });
    await expect(r.publish(e)).rejects.toThrow(/invalid: created_at/);
    r.close();
  });
});
