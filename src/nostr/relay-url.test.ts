import { describe, expect, test } from "bun:test";
import { normalizeRelayUrl, ownUrlCheck } from "./relay-url.ts";

describe("relay URLs", () => {
  test("normalising lowercases scheme and host and drops default ports and trailing slashes", () => {
    expect(normalizeRelayUrl("WSS://Relay.Example.COM:443/")).toBe("wss://relay.example.com");
    expect(normalizeRelayUrl("ws://127.0.0.1:7777/")).toBe("ws://127.0.0.1:7777");
    expect(normalizeRelayUrl("wss://r.example/path/")).toBe("wss://r.example/path");
    expect(normalizeRelayUrl("https://r.example")).toBeUndefined();
    expect(normalizeRelayUrl("not a url")).toBeUndefined();
  });

  test("a loopback listener accepts every loopback name at its port and the public URL", () => {
    const own = ownUrlCheck("127.0.0.1", 7777, () => "wss://relay.example.com");
    for (const u of [
      "ws://127.0.0.1:7777",
      "ws://localhost:7777/",
      "WS://LOCALHOST:7777",
      "wss://relay.example.com/",
    ])
      expect(own(u)).toBe(true);
    for (const u of [
      "ws://127.0.0.1:7778",
      "wss://127.0.0.1:7777",
      "wss://other.example",
      "ws://localhost:7777/x",
    ])
      expect(own(u)).toBe(false);
  });

  test("a listener on all interfaces accepts any host at its port over ws", () => {
    const own = ownUrlCheck("0.0.0.0", 8080, () => "");
    expect(own("ws://10.1.2.3:8080")).toBe(true);
    expect(own("ws://10.1.2.3:8081")).toBe(false);
  });
});
