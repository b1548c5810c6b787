// The slow-reader case: one subscriber asks for every new note and then stops reading its
// socket while many large events are published. What the relay holds for that reader is
// bounded (limits.maxOutboundBytes, then it is closed); this measures what the relay's memory
// does meanwhile: VmRSS, RssAnon and RssFile before, right after the publishing, and after a
// rest. Usage:
//   bun bench/slow-reader.ts --url ws://127.0.0.1:7777 --pid PID [--events 30000] [--size 1400]
//                            [--rest 15]
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import type { WireEvent } from "./load/dataset.ts";
import { runIngest } from "./load/ingest.ts";

const { values: v } = parseArgs({
  options: {
    url: { type: "string" },
    pid: { type: "string" },
    events: { type: "string" },
    size: { type: "string" },
    rest: { type: "string" },
  },
});
if (!v.url || !v.pid) {
  console.error(
    "usage: bun bench/slow-reader.ts --url ws://HOST:PORT --pid PID [--events N] [--size BYTES] [--rest S]",
  );
  process.exit(64);
}
const url = new URL(v.url);
const pid = Number(v.pid);
const events = Number(v.events ?? 30_000);
const size = Number(v.size ?? 1_400);
const rest = Number(v.rest ?? 15);

function memory(): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) / 1024;
  return { rss: mb("VmRSS"), anon: mb("RssAnon"), file: mb("RssFile") };
}

/** A masked client text frame (RFC 6455). */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.from([0x81, 0x80 | 126, n >> 8, n & 255]);
  const mask = Buffer.from([1, 2, 3, 4]);
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i & 3]!));
  return Buffer.concat([head, mask, body]);
}

/** Subscribes to every new note over a raw socket, then stops reading it. */
async function pausedReader(): Promise<{ socket: Socket; received: () => number }> {
  const socket = connect(Number(url.port), url.hostname);
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.write(
        `GET / HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      );
    });
    socket.once("data", (d: Buffer) => {
      bytes += d.length;
      if (!d.toString("latin1").startsWith("HTTP/1.1 101")) reject(new Error("no upgrade"));
      else resolve();
    });
  });
  socket.write(frame(JSON.stringify(["REQ", "slow", { kinds: [1], limit: 0 }])));
  await Bun.sleep(200);
  socket.pause();
  socket.on("data", (d: Buffer) => {
    bytes += d.length;
  });
  return { socket, received: () => bytes };
}

const sk = generateSecretKey();
console.log(`signing ${events} notes of ${size} bytes`);
const base = Math.floor(Date.now() / 1000);
const list: WireEvent[] = [];
for (let i = 0; i < events; i++) {
  const content = `${i} `.padEnd(size, "x");
  const e = finalizeEvent({ kind: 1, created_at: base + (i % 600), tags: [], content }, sk);
  list.push({ ...e });
}

const reader = await pausedReader();
const before = memory();
const r = await runIngest(url.href, list, { connections: 8, window: 100, timeoutMs: 600_000 });
const after = memory();
await Bun.sleep(rest * 1000);
const rested = memory();
reader.socket.resume();
await Bun.sleep(500);
const closed = reader.socket.destroyed || reader.socket.readableEnded;
reader.socket.destroy();

const row = (name: string, m: { rss: number; anon: number; file: number }) =>
  `| ${name} | ${m.rss.toFixed(0)} | ${m.anon.toFixed(0)} | ${m.file.toFixed(0)} |`;
console.log(`accepted ${r.accepted} of ${events} at ${Math.round(r.acceptedPerSec)}/s`);
console.log("| when | VmRSS MiB | RssAnon MiB | RssFile MiB |\n|---|---:|---:|---:|");
console.log(row("before", before));
console.log(row("after publishing", after));
console.log(row(`after ${rest} s at rest`, rested));
console.log(
  `growth: VmRSS +${(after.rss - before.rss).toFixed(0)} MiB right after, +${(rested.rss - before.rss).toFixed(0)} MiB at rest; ` +
    `the paused reader received ${(reader.received() / 2 ** 20).toFixed(1)} MiB before it was ${closed ? "closed" : "left open"}`,
);
process.exit(0);
