// When the NIP-42 challenge is sent, checked on the bytes of a raw TCP socket: never in the
// write that carries the WebSocket handshake, only when something asks for it (an auth-required:
// answer, or a relay that requires AUTH for writes or reads), and one challenge per connection.
import { describe, expect, test } from "bun:test";
import type { Socket } from "node:net";
import { connect } from "node:net";
import { newKey, RawClient, signed, startTestRelay } from "./harness.ts";

/** A WebSocket client on a bare TCP socket, so a test sees what each read brings. */
class TcpClient {
  /** each chunk as the socket delivered it */
  readonly reads: Buffer[] = [];
  private buf = Buffer.alloc(0);
  private wake: (() => void) | undefined;

  private constructor(private readonly sock: Socket) {
    sock.on("data", (d: Buffer) => {
      this.reads.push(d);
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
  }

  /** Connects and completes the handshake; resolves with the read that ended the 101 response. */
  static async open(port: number): Promise<{ client: TcpClient; handshakeRead: Buffer; head: string }> {
    const sock = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => sock.once("connect", resolve).once("error", reject));
    const client = new TcpClient(sock);
    sock.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await client.until(() => client.buf.indexOf("\r\n\r\n") >= 0);
    const end = client.buf.indexOf("\r\n\r\n") + 4;
    const head = client.buf.subarray(0, end).toString("latin1");
    client.buf = client.buf.subarray(end);
    return { client, handshakeRead: client.reads.at(-1)!, head };
  }

  private async until(cond: () => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${this.buf.toString("latin1")}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  /** Sends one masked text frame (payloads under 126 bytes). */
  send(msg: unknown): void {
    const payload = Buffer.from(JSON.stringify(msg));
    if (payload.length >= 126) throw new Error("payload too long for this test client");
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = payload.map((b, i) => b ^ mask[i % 4]!);
    this.sock.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
  }

  /** The next unmasked text frame from the relay, parsed. */
  async next(): Promise<unknown[]> {
    const header = () => {
      if (this.buf.length < 2) return undefined;
      const len7 = this.buf[1]! & 0x7f;
      const [len, at] = len7 === 126 ? [this.buf.length >= 4 ? this.buf.readUInt16BE(2) : -1, 4] : [len7, 2];
      return len >= 0 && this.buf.length >= at + len ? { len, at } : undefined;
    };
    await this.until(() => header() !== undefined);
    const { len, at } = header()!;
    const text = this.buf.subarray(at, at + len).toString("utf8");
    this.buf = this.buf.subarray(at + len);
    return JSON.parse(text) as unknown[];
  }

  close(): void {
    this.sock.destroy();
  }
}

describe("NIP-42 challenge timing", () => {
  for (const flag of ["auth.writes", "auth.reads"]) {
    test(`with ${flag}, the challenge is not in the handshake's read and comes first after the client's first frame`, async () => {
      const r = startTestRelay({ [flag]: "true" });
      const { client, handshakeRead, head } = await TcpClient.open(r.server.port!);
      expect(head).toStartWith("HTTP/1.1 101 ");
      // The read that ended the 101 response holds nothing after it.
      expect(handshakeRead.toString("latin1")).toEndWith("\r\n\r\n");
      client.send(["REQ", "q", { kinds: [1] }]);
      const first = await client.next();
      expect(first[0]).toBe("AUTH");
      expect(first[1]).toMatch(/^[0-9a-f]{32}$/);
      const second = await client.next();
      if (flag === "auth.reads") {
        expect(second.slice(0, 2)).toEqual(["CLOSED", "q"]);
        expect(String(second[2])).toStartWith("auth-required: ");
      } else expect(second).toEqual(["EOSE", "q"]);
      client.close();
    });
  }

  test("with auth.writes, a client that says nothing gets the challenge after the handshake, not with it", async () => {
    const r = startTestRelay({ "auth.writes": "true" });
    const { client, handshakeRead } = await TcpClient.open(r.server.port!);
    expect(handshakeRead.toString("latin1")).toEndWith("\r\n\r\n");
    const auth = await client.next();
    expect(auth[0]).toBe("AUTH");
    // The same challenge is kept: the first answer after it brings no other.
    client.send(["REQ", "q", { kinds: [1] }]);
    expect(await client.next()).toEqual(["EOSE", "q"]);
    client.close();
  });

  test("with default settings no challenge is sent until a REQ asks for a restricted kind", async () => {
    const r = startTestRelay();
    const { client, handshakeRead } = await TcpClient.open(r.server.port!);
    expect(handshakeRead.toString("latin1")).toEndWith("\r\n\r\n");
    client.send(["REQ", "notes", { kinds: [1] }]);
    expect(await client.next()).toEqual(["EOSE", "notes"]);
    client.send(["COUNT", "n", { kinds: [1] }]);
    expect(await client.next()).toEqual(["COUNT", "n", { count: 0 }]);
    client.send(["REQ", "dms", { kinds: [4] }]);
    expect((await client.next())[0]).toBe("AUTH");
    const closed = await client.next();
    expect(closed.slice(0, 2)).toEqual(["CLOSED", "dms"]);
    expect(String(closed[2])).toStartWith("auth-required: ");
    client.close();
  });

  test("one challenge per connection: later auth-required: answers reuse the one sent", async () => {
    const r = startTestRelay({ "auth.writes": "true" });
    const c = await RawClient.connect(r.url);
    const sk = newKey();
    const refused = await c.publish(signed(sk));
    expect(String(refused[3])).toStartWith("auth-required: ");
    await c.publish(signed(sk, { tags: [["-"]] }));
    c.send(["REQ", "dms", { kinds: [4] }]);
    await c.next((f) => f[0] === "CLOSED");
    c.send(["COUNT", "n", { kinds: [4] }]);
    await c.next((f) => f[0] === "CLOSED" && f[1] === "n");
    expect(c.frames.map((f) => f[0])).toEqual(["AUTH", "OK", "OK", "CLOSED", "CLOSED"]);
    c.close();
  });

  test("an AUTH before any challenge was sent is refused with OK false invalid:", async () => {
    const r = startTestRelay();
    const c = await RawClient.connect(r.url);
    const e = signed(newKey(), { kind: 22242, tags: [["relay", r.url]] });
    c.send(["AUTH", e]);
    const ok = await c.ok(e.id);
    expect(ok[2]).toBe(false);
    expect(String(ok[3])).toStartWith("invalid: ");
    c.close();
  });
});
