// NDK (@nostr-dev-kit/ndk) against a relay with auth.writes: with the sign-in auth policy it
// answers the challenge every connection gets there, then publishes, and the event is stored.
// As an app does, it publishes once signed in: NDK 3.0.3 retries a publish refused with
// auth-required: only when its policy returns `true`, not when it returns the signed AUTH event
// (the sign-in policy's case), so an EVENT racing the sign-in would never be answered.
import { expect, test } from "bun:test";
import NDK, { NDKEvent, NDKPrivateKeySigner, NDKRelayAuthPolicies } from "@nostr-dev-kit/ndk";
import { RawClient, startTestRelay } from "../harness.ts";

test("with auth.writes, an NDK client authenticates with its sign-in policy and publishes", async () => {
  const r = startTestRelay({ "auth.writes": "true" });
  const signer = NDKPrivateKeySigner.generate();
  // No outbox model: it would connect to public relays this test must not depend on.
  const ndk = new NDK({ explicitRelayUrls: [r.url], signer, enableOutboxModel: false });
  ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk });
  const relay = [...ndk.pool.relays.values()][0]!;
  const authed = new Promise<void>((resolve) => relay.once("authed", () => resolve()));
  await ndk.connect(10_000);
  await authed;
  const note = new NDKEvent(ndk, { kind: 1, content: "from NDK" });
  const published = await note.publish();
  expect([...published].map((relay) => relay.url.replace(/\/$/, ""))).toEqual([r.url]);
  const pubkey = (await signer.user()).pubkey;
  expect([...r.conns].some((c) => c.authed.has(pubkey))).toBe(true);
  const reader = await RawClient.connect(r.url);
  expect(await reader.req("mine", { authors: [pubkey] })).toEqual([note.id]);
  reader.close();
  for (const relay of ndk.pool.relays.values()) relay.disconnect();
});
