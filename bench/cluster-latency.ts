// Cross-node delivery latency of a cluster: one `nats-server -js` and three relay nodes on
// loopback (each its own data directory), a subscriber on B and one on C, and events published to
// A at a steady rate. For each event: the time from sending it to A until its EVENT frame arrives
// on B and on C, and until A's `OK`. Prints p50/p90/p99/max. Usage:
//   bun bench/cluster-latency.ts [--events 2000] [--rate 200] [--okAfter local|stream]
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { NATS_SERVER, Nats, Node, until } from "../test/cluster-nodes.ts";
import { tempDir } from "../test/harness.ts";

const { values: v } = parseArgs({
  options: { events: { type: "string" }, rate: { type: "string" }, okAfter: { type: "string" } },
});
const EVENTS = Number(v.events ?? 2000);
const RATE = Number(v.rate ?? 200);
const OK_AFTER = v.okAfter ?? "local";
if (!NATS_SERVER) {
  console.error("nats-server is not installed (apt-get install nats-server)");
  process.exit(1);
}

const dir = tempDir("relay-cluster-bench-");
const nats = new Nats(join(dir, "nats"));
await nats.start();
const nodes = ["A", "B", "C"].map(
  (n) =>
    new Node(n, join(dir, n), nats.url, [
      "--cluster.okAfter",
      OK_AFTER,
      "--verify.threads",
      "-1",
      "--consumers.thread",
      "true",
    ]),
);
const [a, b, c] = nodes as [Node, Node, Node];
try {
  await Promise.all(nodes.map((n) => n.start()));
  await until(
    async () => (await Promise.all(nodes.map((n) => n.cluster()))).every((m) => m.connected === 1),
    "connect",
  );

  const sk = generateSecretKey();
  const sentAt = new Map<string, number>();
  const lat = { ok: [] as number[], B: [] as number[], C: [] as number[] };
  const open = (url: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.onopen = () => resolve(ws);
      ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
  for (const [name, node] of [
    ["B", b],
    ["C", c],
  ] as const) {
    const ws = await open(node.url);
    await new Promise<void>((resolve) => {
      ws.onmessage = (m) => {
        const f = JSON.parse(String(m.data)) as unknown[];
        if (f[0] === "EOSE") resolve();
        else if (f[0] === "EVENT") {
          const t = sentAt.get((f[2] as { id: string }).id);
          if (t !== undefined) lat[name].push(performance.now() - t);
        }
      };
      ws.send(JSON.stringify(["REQ", "bench", { authors: [getPublicKey(sk)], limit: 0 }]));
    });
  }
  const pub = await open(a.url);
  pub.onmessage = (m) => {
    const f = JSON.parse(String(m.data)) as unknown[];
    const t = f[0] === "OK" ? sentAt.get(f[1] as string) : undefined;
    if (t !== undefined) lat.ok.push(performance.now() - t);
  };
  const events = Array.from({ length: EVENTS }, (_, i) =>
    finalizeEvent(
      { kind: 1, created_at: Math.floor(Date.now() / 1000), tags: [], content: `bench ${i}` },
      sk,
    ),
  );
  const started = performance.now();
  for (let i = 0; i < events.length; i++) {
    // A steady rate: wait for the moment this event is due.
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const e = events[i]!;
    sentAt.set(e.id, performance.now());
    pub.send(JSON.stringify(["EVENT", e]));
  }
  await until(
    () => lat.B.length === EVENTS && lat.C.length === EVENTS && lat.ok.length === EVENTS,
    "delivery",
    120_000,
  );
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((x, y) => x - y);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(1);
  };
  console.log(`${EVENTS} events to A at ${RATE}/s, okAfter=${OK_AFTER}; milliseconds`);
  console.log("what          p50     p90     p99     max");
  for (const [name, xs] of [
    ["OK from A", lat.ok],
    ["EVENT on B", lat.B],
    ["EVENT on C", lat.C],
  ] as const)
    console.log(`${name.padEnd(12)} ${[50, 90, 99, 100].map((p) => pct(xs, p).padStart(7)).join(" ")}`);
} finally {
  await Promise.all(nodes.map((n) => n.kill("SIGTERM")));
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
