// rx-nostr and applesauce-relay (both built on RxJS) publishing through NIP-42 on a relay with
// auth.writes: each answers the challenge that comes just before its EVENT's auth-required:
// refusal, sends the event again, and the event is stored.
import { expect, test } from "bun:test";
import { Relay } from "applesauce-relay";
import type { EventTemplate } from "nostr-tools/pure";
import { finalizeEvent, getPublicKey, verifyEvent } from "nostr-tools/pure";
import { createRxNostr, type EventSigner } from "rx-nostr";
import { filter, firstValueFrom } from "rxjs";
import type { TestRelay } from "../harness.ts";
import { newKey, now, RawClient, startTestRelay } from "../harness.ts";

const start = () => startTestRelay({ "auth.writes": "true" });

const sign = (sk: Uint8Array, t: Partial<EventTemplate>) =>
  finalizeEvent(
    { kind: t.kind ?? 1, created_at: t.created_at ?? now(), tags: t.tags ?? [], content: t.content ?? "" },
    sk,
  );

/** The ids of the events stored by this author, read back over a raw client. */
async function storedBy(r: TestRelay, sk: Uint8Array): Promise<string[]> {
  const c = await RawClient.connect(r.url);
  const ids = await c.req("mine", { authors: [getPublicKey(sk)] });
  c.close();
  return ids;
}

test("with auth.writes, rx-nostr authenticates by itself and its event is stored", async () => {
  const r = start();
  const sk = newKey();
  const signer = {
    signEvent: async (p: Partial<EventTemplate>) => sign(sk, p),
    getPublicKey: async () => getPublicKey(sk),
  };
  const rx = createRxNostr({
    // rx-nostr types signEvent generically over the kind; nostr-tools' events carry a plain number.
    signer: signer as unknown as EventSigner,
    verifier: async (e) => verifyEvent(e),
    authenticator: {},
    skipFetchNip11: true,
  });
  rx.setDefaultRelays([r.url]);
  // An auth-required: refusal, if the EVENT is decided before the AUTH, comes with done: false.
  const ok = await firstValueFrom(rx.send({ kind: 1, content: "from rx-nostr" }).pipe(filter((p) => p.done)));
  expect([ok.ok, ok.notice ?? ""]).toEqual([true, ""]);
  expect(await storedBy(r, sk)).toEqual([ok.eventId]);
  rx.dispose();
});

test("with auth.writes, applesauce-relay authenticates when challenged and publish retries the event", async () => {
  const r = start();
  const sk = newKey();
  const relay = new Relay(r.url);
  // As applesauce apps do: answer the challenge whenever the relay sends one.
  const answered = relay.challenge$.pipe(filter((c) => c !== null)).subscribe(() => {
    void relay.authenticate({ signEvent: (t) => finalizeEvent(t, sk) });
  });
  const e = sign(sk, { content: "from applesauce" });
  const res = await relay.publish(e);
  expect([res.ok, res.message ?? ""]).toEqual([true, ""]);
  expect(await storedBy(r, sk)).toEqual([e.id]);
  answered.unsubscribe();
  relay.close();
});
