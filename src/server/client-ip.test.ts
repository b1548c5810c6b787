import { describe, expect, test } from "bun:test";
import { loadConfig } from "../config/load.ts";
import { clientIp, inList, normalizeIp } from "./client-ip.ts";

describe("client addresses", () => {
  test("IPv4-mapped IPv6, as Bun reports IPv4 peers on a dual-stack socket, is plain IPv4", () => {
    expect(normalizeIp("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(normalizeIp("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(normalizeIp("2001:db8::1")).toBe("2001:db8::1");
  });

  test("lists match addresses and CIDR ranges of both families", () => {
    const list = ["127.0.0.0/8", "::1", "10.1.0.0/16", "fd00::/8"];
    const inside = ["127.9.9.9", "::ffff:127.0.0.1", "::1", "10.1.200.3", "fd12:3456::1"];
    const outside = ["128.0.0.1", "::2", "10.2.0.1", "fe80::1", "garbage"];
    expect(inside.map((ip) => inList(list, ip))).toEqual(inside.map(() => true));
    expect(outside.map((ip) => inList(list, ip))).toEqual(outside.map(() => false));
  });

  test("X-Forwarded-For gives the right-most hop that is not a trusted proxy", () => {
    const c = loadConfig({
      flags: { "http.realIpHeader": "X-Forwarded-For", "http.trustedProxies": "127.0.0.1,10.0.0.0/8" },
    });
    const h = (v: string) => new Headers({ "x-forwarded-for": v });
    expect(clientIp(c, "127.0.0.1", h("1.1.1.1, 2.2.2.2, 10.0.0.5"))).toBe("2.2.2.2");
    expect(clientIp(c, "::ffff:10.9.9.9", h("2.2.2.2"))).toBe("2.2.2.2");
    expect(clientIp(c, "10.0.0.1", h("10.0.0.2, 10.0.0.3"))).toBe("10.0.0.2");
    expect(clientIp(c, "192.0.2.1", h("2.2.2.2"))).toBe("192.0.2.1");
    expect(clientIp(c, "127.0.0.1", h(""))).toBe("127.0.0.1");
    expect(clientIp(c, "127.0.0.1", new Headers())).toBe("127.0.0.1");
  });
});
