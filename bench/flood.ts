// A flood against the disk budget (store.maxDiskGb), as an operator would meet it: a fresh relay
// with a small budget, one kind 0, then N kind-1 notes of ~SIZE bytes from one connection at
// RATE events/s (0: as fast as the relay answers, WINDOW in flight). Meanwhile the data
// directory's disk (`du`, allocated blocks) is sampled every 250 ms and a REQ is timed every
// second; afterwards the newest 200 OK'd notes and the kind 0 must still be served.
//
//   bun bench/flood.ts --budget-gb 0.05 --events 26400 --size 4000 --rate 440
//   bun bench/flood.ts --budget-gb 0.05 --rate 0 --window 50 -- --search.enabled false
//   bun bench/flood.ts --tree /tmp/wt-base --budget-gb 0.5 --events 200000
//   bun bench/flood.ts --budget-gb 0.015625 --events 12000 --rate 0 --vocab 400 --timeline 1
//
// Prints one JSON summary: the peak of `du` against the bound the budget promises
// (budget × 1.25 + 16 MiB), OKs by outcome and latency, the REQ probe's latencies, what is
// served after. --timeline N prints, every N seconds, each file's length and pages in use, the
// budget's target, whether the writer holds events, and the evictions so far (from /metrics);
// --vocab sets how many numbers each of the 14 words takes (a smaller vocabulary: each note holds
// more of it); FLOOD_KEEP=1 keeps the data directory for `relay stats`.
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { makeSigner } from "./load/signer.ts";
import { startRelay } from "./scale/relay-process.ts";

const ROOT = join(import.meta.dir, "..");
const MIB = 2 ** 20;

interface Args {
  tree: string;
  port: number;
  budgetGb: number;
  events: number;
  size: number;
  rate: number;
  window: number;
  settleS: number;
  /** numbers each word of a note takes: the vocabulary is the 14 words times this */
  vocab: number;
  /** print a line every N seconds: du of each file, data in use, evicted so far */
  timeline: number;
  relayFlags: string[];
}

function parse(argv: string[]): Args {
  const dash = argv.indexOf("--");
  const mine = dash < 0 ? argv : argv.slice(0, dash);
  const a: Args = {
    tree: ROOT,
    port: 7870,
    budgetGb: 0.05,
    events: 26_400,
    size: 4000,
    rate: 440,
    window: 50,
    settleS: 15,
    timeline: 0,
    vocab: 997,
    relayFlags: dash < 0 ? [] : argv.slice(dash + 1),
  };
  for (let i = 0; i < mine.length; i += 2) {
    const [k, v] = [mine[i]!, mine[i + 1]];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === "--tree") a.tree = resolve(v);
    else if (k === "--port") a.port = Number(v);
    else if (k === "--budget-gb") a.budgetGb = Number(v);
    else if (k === "--events") a.events = Number(v);
    else if (k === "--size") a.size = Number(v);
    else if (k === "--rate") a.rate = Number(v);
    else if (k === "--window") a.window = Number(v);
    else if (k === "--settle") a.settleS = Number(v);
    else if (k === "--timeline") a.timeline = Number(v);
    else if (k === "--vocab") a.vocab = Number(v);
    else throw new Error(`unknown option ${k}`);
  }
  return a;
}

const WORDS =
  "amber basil cedar delta ember fjord grove heron indigo juniper kestrel lumen marble nectar".split(" ");

/** Signed events: one kind 0, then `n` notes of about `size` bytes, each a second newer. */
function dataset(n: number, size: number, vocab: number): string[] {
  const authors = 50;
  const sks = new Uint8Array(authors * 32);
  for (let i = 0; i < sks.length; i++) sks[i] = (i * 131 + 7) & 0xff;
  for (let a = 0; a < authors; a++) sks[a * 32] = a + 1;
  const signer = makeSigner(sks);
  const pks = Array.from({ length: authors }, (_, a) =>
    bytesToHex(schnorr.getPublicKey(sks.subarray(a * 32, a * 32 + 32))),
  );
  const start = Math.floor(Date.now() / 1000) - n - 60;
  const out: string[] = [];
  const sig = new Uint8Array(64);
  const make = (who: number, kind: number, at: number, content: string): string => {
    const pubkey = pks[who]!;
    const id = sha256(new TextEncoder().encode(JSON.stringify([0, pubkey, at, kind, [], content])));
    signer.sign(id, who, sig, 0);
    return JSON.stringify({
      id: bytesToHex(id),
      pubkey,
      created_at: at,
      kind,
      tags: [],
      content,
      sig: bytesToHex(sig),
    });
  };
  out.push(make(0, 0, start, JSON.stringify({ name: "flood profile" })));
  for (let i = 0; i < n; i++) {
    let text = `n${i}`;
    for (let k = 0; text.length < size; k++)
      text += ` ${WORDS[(i + k) % WORDS.length]}${(i * 31 + k * 7) % vocab}`;
    out.push(make(1 + (i % (authors - 1)), 1, start + 1 + i, text));
  }
  return out;
}

function duBytes(dir: string): number {
  const r = Bun.spawnSync(["du", "-s", "-B1", dir], { stderr: "ignore" });
  return Number(r.stdout.toString().split("\t")[0]) || 0;
}

/** One connection: EVENTs with OK tracking, REQs answered as arrays of events at EOSE. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((res, rej) => {
    ws.onopen = () => res();
    ws.onerror = () => rej(new Error(`cannot connect to ${url}`));
  });
  const oks = new Map<string, (ok: [boolean, string]) => void>();
  const closed: string[] = [];
  const subs = new Map<
    string,
    { events: { id: string; kind: number }[]; done: (e: { id: string; kind: number }[]) => void }
  >();
  ws.onmessage = (m) => {
    const f = JSON.parse(String(m.data)) as unknown[];
    if (f[0] === "OK") {
      oks.get(f[1] as string)?.([f[2] as boolean, f[3] as string]);
      oks.delete(f[1] as string);
    } else if (f[0] === "EVENT") subs.get(f[1] as string)?.events.push(f[2] as { id: string; kind: number });
    else if (f[0] === "EOSE" || f[0] === "CLOSED") {
      if (f[0] === "CLOSED") closed.push(String(f[2]));
      const s = subs.get(f[1] as string);
      subs.delete(f[1] as string);
      // Stored events only: the subscription is not kept open for live ones.
      if (f[0] === "EOSE") ws.send(JSON.stringify(["CLOSE", f[1]]));
      s?.done(s.events);
    }
  };
  let n = 0;
  return {
    publish(json: string, id: string): Promise<[boolean, string]> {
      return new Promise((res) => {
        oks.set(id, res);
        ws.send(`["EVENT",${json}]`);
      });
    },
    req(filter: object): Promise<{ id: string; kind: number }[]> {
      const sub = `q${++n}`;
      return new Promise((done) => {
        subs.set(sub, { events: [], done });
        ws.send(JSON.stringify(["REQ", sub, filter]));
      });
    },
    close: () => ws.close(),
    /** CLOSED reasons the relay gave */
    closed,
  };
}

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main(): Promise<void> {
  const a = parse(Bun.argv.slice(2));
  const t0 = performance.now();
  const events = dataset(a.events, a.size, a.vocab);
  console.error(`signed ${events.length} events in ${Math.round(performance.now() - t0)} ms`);
  const data = mkdtempSync(`/tmp/relay-flood-${a.port}-`);
  const budget = a.budgetGb * 2 ** 30;
  const bound = budget * 1.25 + 16 * MIB;
  const relay = await startRelay({
    cmd: [
      process.execPath,
      "src/main.ts",
      "--port",
      String(a.port),
      "--data",
      data,
      "--store.maxDiskGb",
      String(a.budgetGb),
      ...a.relayFlags,
    ],
    cwd: a.tree,
    logFile: `${data}.log`,
    timeoutMs: 60_000,
  });
  const pub = await connect(relay.url);
  const probe = await connect(relay.url);
  const t1 = performance.now();
  let peak = 0;
  let peakAt = 0;
  let overSamples = 0;
  let samples = 0;
  const sampler = setInterval(() => {
    const b = duBytes(data);
    samples++;
    if (b > bound) overSamples++;
    if (b > peak) {
      peak = b;
      peakAt = (performance.now() - t1) / 1000;
    }
  }, 250);
  const timeline =
    a.timeline > 0
      ? setInterval(async () => {
          const m = await fetch(`http://127.0.0.1:${a.port}/metrics`)
            .then((r) => r.text())
            .catch(() => "");
          const v = (name: string): number => {
            const line = m.split("\n").find((l) => l.startsWith(name));
            return line ? Number(line.split(" ").pop()) : Number.NaN;
          };
          const f = (b: number): string => (b / MIB).toFixed(1);
          console.error(
            [
              `t=${((performance.now() - t1) / 1000).toFixed(0)}s`,
              `du=${f(duBytes(data))}`,
              `log=${f(duBytes(join(data, "data.mdb")))}`,
              `derived=${f(duBytes(join(data, "derived")))}`,
              `inUse=${f(v("relay_disk_in_use_bytes"))}`,
              `logUse=${f(v('relay_disk_by_file_bytes{file="data.mdb",part="in_use"}'))}`,
              `derivedUse=${f(v('relay_disk_by_file_bytes{file="derived/data.mdb",part="in_use"}'))}`,
              `target=${f(v("relay_disk_target_bytes"))}`,
              `hold=${v("relay_disk_holding")}`,
              `heldS=${v("relay_writer_disk_hold_seconds_total").toFixed(1)}`,
              `backlogS=${v("relay_writer_backlog_wait_seconds_total").toFixed(1)}`,
              `evicted=${v('relay_events_removed_total{by="budget"}')}`,
            ].join(" "),
          );
        }, a.timeline * 1000)
      : undefined;
  const probeMs: number[] = [];
  let probeFailed = 0;
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const t = performance.now();
      const got = await Promise.race([
        probe.req({ kinds: [1], limit: 10 }),
        Bun.sleep(10_000).then(() => null),
      ]);
      if (got === null) probeFailed++;
      else probeMs.push(performance.now() - t);
      await Bun.sleep(1000);
    }
  })();

  const outcomes: Record<string, number> = {};
  const okMs: number[] = [];
  const stored: string[] = [];
  let inFlight = 0;
  let sent = 0;
  let wake: (() => void) | undefined;
  const done: Promise<void>[] = [];
  for (const json of events) {
    if (a.rate > 0) {
      const due = t1 + (sent / a.rate) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
    }
    while (inFlight >= a.window) await new Promise<void>((r) => (wake = r));
    const id = json.slice(7, 71);
    inFlight++;
    sent++;
    const at = performance.now();
    done.push(
      pub.publish(json, id).then(([ok, msg]) => {
        okMs.push(performance.now() - at);
        inFlight--;
        wake?.();
        const key = ok ? "ok" : msg.split(":")[0] || "false";
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (ok && !msg.startsWith("duplicate")) stored.push(id);
      }),
    );
  }
  await Promise.all(done);
  const floodS = (performance.now() - t1) / 1000;
  await Bun.sleep(a.settleS * 1000);
  probing = false;
  await prober;
  clearInterval(sampler);
  clearInterval(timeline);
  const final = duBytes(data);

  const profile = await probe.req({ kinds: [0] });
  const newest = await probe.req({ kinds: [1], limit: 200 });
  const want = new Set(stored.slice(-200));
  const newestServed = newest.filter((e) => want.has(e.id)).length;
  pub.close();
  probe.close();
  const exit = await relay.stop();
  if (!process.env.FLOOD_KEEP) rmSync(data, { recursive: true, force: true });
  else console.error(`kept ${data}`);
  console.log(
    JSON.stringify(
      {
        tree: a.tree,
        budgetMiB: +(budget / MIB).toFixed(1),
        boundMiB: +(bound / MIB).toFixed(1),
        events: a.events,
        size: a.size,
        rate: a.rate,
        floodSeconds: +floodS.toFixed(1),
        acceptedPerSecond: Math.round((outcomes.ok ?? 0) / floodS),
        outcomes,
        duPeakMiB: +(peak / MIB).toFixed(1),
        duPeakAtSeconds: +peakAt.toFixed(1),
        duFinalMiB: +(final / MIB).toFixed(1),
        samplesOverBound: `${overSamples}/${samples}`,
        okMs: {
          p50: Math.round(pct(okMs, 50)),
          p99: Math.round(pct(okMs, 99)),
          max: Math.round(pct(okMs, 100)),
        },
        reqProbe: {
          n: probeMs.length,
          p50: Math.round(pct(probeMs, 50)),
          p99: Math.round(pct(probeMs, 99)),
          max: Math.round(pct(probeMs, 100)),
          failed: probeFailed,
        },
        kind0Served: profile.length === 1,
        newestReturned: newest.length,
        closed: [...new Set(probe.closed)].slice(0, 5),
        newest200Served: `${newestServed}/${Math.min(200, stored.length)}`,
        relayExit: exit,
      },
      null,
      2,
    ),
  );
}

await main();
