// The client's address: the TCP peer, or, when the peer is a trusted reverse proxy, the address
// it forwards in http.realIpHeader. Every per-IP limit, the write-policy plugin, logs and
// metrics see only the address resolved here.
import { isIP } from "node:net";
import type { Config } from "../config/schema.ts";

/** 16 bytes for IPv6, 4 for IPv4; undefined when not an address. */
function bytes(ip: string): Uint8Array | undefined {
  const v = isIP(ip);
  if (v === 4) return new Uint8Array(ip.split(".").map(Number));
  if (v !== 6) return undefined;
  const zone = ip.indexOf("%");
  let s = zone === -1 ? ip : ip.slice(0, zone);
  const out = new Uint8Array(16);
  // A trailing dotted quad (::ffff:1.2.3.4) is two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const q = quad[1]!.split(".").map(Number);
    s = `${s.slice(0, -quad[1]!.length)}${((q[0]! << 8) | q[1]!).toString(16)}:${((q[2]! << 8) | q[3]!).toString(16)}`;
  }
  const [head, tail] = s.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) =>
    part ? part.split(":").map((g) => Number.parseInt(g, 16)) : [];
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** The address as the operator writes it: IPv4-mapped IPv6 (how Bun reports IPv4 peers on a
 * dual-stack listener) becomes plain IPv4, so limits and lists see one form per client. */
export function normalizeIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m && isIP(m[1]!) === 4) return m[1]!;
  const b = isIP(ip) === 6 ? bytes(ip) : undefined;
  if (b && MAPPED_PREFIX.every((x, i) => b[i] === x)) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  return ip;
}

interface Range {
  net: Uint8Array;
  bits: number;
}

/** Parses "10.0.0.0/8", "fd00::/8", "127.0.0.1" or "::1"; a string saying why otherwise. */
export function parseRange(text: string): Range | string {
  const slash = text.indexOf("/");
  const addr = normalizeIp(slash === -1 ? text : text.slice(0, slash));
  const net = bytes(addr);
  if (!net) return `'${text}' is not an IP address or CIDR range`;
  const max = net.length * 8;
  const suffix = slash === -1 ? String(max) : text.slice(slash + 1);
  const bits = Number(suffix);
  if (!/^\d{1,3}$/.test(suffix) || bits > max) return `'${text}' has a bad prefix length (0 to ${max})`;
  return { net, bits };
}

function contains(r: Range, b: Uint8Array): boolean {
  if (r.net.length !== b.length) return false;
  let left = r.bits;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((r.net[i]! & mask) !== (b[i]! & mask)) return false;
  }
  return true;
}

const compiled = new WeakMap<readonly string[], Range[]>();

/** True when `ip` falls in one of the listed addresses or ranges (lists are parsed once each). */
export function inList(list: readonly string[], ip: string): boolean {
  if (list.length === 0) return false;
  let ranges = compiled.get(list);
  if (!ranges) {
    ranges = list.map(parseRange).filter((r): r is Range => typeof r !== "string");
    compiled.set(list, ranges);
  }
  const b = bytes(normalizeIp(ip));
  return b !== undefined && ranges.some((r) => contains(r, b));
}

/**
 * The client's address for a request from `peer`. The header is read only when the peer is a
 * trusted proxy. X-Forwarded-For lists every hop, the last appended by the nearest proxy;
 * anything left of a hop we do not trust may be forged, so the right-most address that is not
 * itself a trusted proxy is the client.
 */
export function clientIp(c: Config, peer: string, headers: Headers): string {
  const ip = normalizeIp(peer);
  const name = c["http.realIpHeader"];
  const trusted = c["http.trustedProxies"];
  if (name === "" || !inList(trusted, ip)) return ip;
  const value = headers.get(name);
  if (!value) return ip;
  const hops = value
    .split(",")
    .map((h) => normalizeIp(h.trim()))
    .filter((h) => isIP(h) !== 0);
  if (hops.length === 0) return ip;
  for (let i = hops.length - 1; i >= 0; i--) if (!inList(trusted, hops[i]!)) return hops[i]!;
  return hops[0]!;
}
