// A reader that stops reading must not make the relay buffer without bound: once its queue
// passes limits.maxOutboundBytes it is closed, and other subscribers keep getting every event.
import { expect, test } from "bun:test";
import { connect } from "node:net";
import { getPublicKey } from "nostr-tools/pure";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

const relay = startTestRelay({ "limits.maxOutboundBytes": "1048576" });

/** A WebSocket client by hand over TCP, so that it can stop reading. */
async function stuckSubscriber(url: string, req: unknown[]) {
  const { hostname, port } = new URL(url.replace("ws://", "http://"));
  const sock = connect(Number(port), hostname);
  await new Promise<void>((r) => sock.once("connect", () => r()));
  sock.write(
    `GET / HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  await new Promise<void>((r) => sock.once("data", () => r()));
  const payload = Buffer.from(JSON.stringify(req));
  const mask = Buffer.from([1, 2, 3, 4]);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0xfe, payload.length >> 8, payload.length & 0xff]);
  sock.write(Buffer.concat([header, mask, payload.map((b, i) => b ^ mask[i % 4]!)]));
  sock.pause(); // never read again
  return sock;
}

test("a subscriber that stops reading is closed while others receive every event", async () => {
  const sk = newKey();
  const filter = { authors: [getPublicKey(sk)], limit: 0 };
  const stuck = await stuckSubscriber(relay.url, ["REQ", "s", filter]);
  const healthy = await RawClient.connect(relay.url);
  await healthy.req("h", filter);
  await Bun.sleep(50);
  expect(relay.conns.size).toBe(2);

  const publisher = await RawClient.connect(relay.url);
  const events = Array.from({ length: 150 }, (_, i) => signed(sk, { content: `${i}`.padEnd(100_000, "x") }));
  // One at a time, so a healthy reader never has more than one event queued.
  for (const e of events) expect((await publisher.publish(e))[2]).toBe(true);
  for (let i = 0; i < 1500 && healthy.frames.filter((f) => f[0] === "EVENT").length < events.length; i++)
    await Bun.sleep(10);

  expect(healthy.frames.filter((f) => f[0] === "EVENT").length).toBe(events.length);
  expect(relay.conns.size).toBe(2); // healthy + publisher; the stuck reader is gone
  stuck.destroy();
  healthy.close();
  publisher.close();
});
