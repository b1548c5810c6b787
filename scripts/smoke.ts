// Smoke test of a compiled relay (after `bun scripts/build.ts`):
//
//   bun scripts/smoke.ts [dist/relay-linux-x64] [--emulator "qemu-aarch64-static -L /usr/aarch64-linux-gnu"]
//
// Copies the binary into a fresh temporary directory and runs it from another directory with an
// environment holding nothing but PATH=/nonexistent, HOME and TMPDIR, so it can reach no bun, node
// or node_modules; with --emulator, every run goes through that command (CI runs the arm64 binary
// under qemu-aarch64 and the x64 one under `qemu-x86_64 -cpu Nehalem`, a CPU without AVX).
// Checks: --version (the target of the file's name and the libsecp256k1 built in), every
// command's --help (each command is a lazily imported module that must be inside the binary),
// NIP-11 and the start-up line (the map size chosen; the runtime settings applied by executing
// itself again natively, skipped under an emulator), the explorer page and its script, an event
// published over WebSocket (signature checked in a verify worker thread) and queried back, one
// with a bad signature refused, /metrics showing the consumers' thread at work, SIGTERM exiting
// 0, the event still there after a restart, and `relay import` then `relay export` giving back
// the same bytes; then, where it can hide the host's libsecp256k1 (as root, in a mount
// namespace), that the binary verifies with the copy it carries and refuses a bad signature with
// it. Exits non-zero with a message on the first failure.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };
import { storedJson } from "../src/nostr/canonical.ts";
import { libraryFiles, note, roundTripEvents } from "./smoke-fixtures.ts";

class SmokeError extends Error {}
const fail = (msg: string): never => {
  throw new SmokeError(msg);
};

const { values: opts, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { emulator: { type: "string" } },
  allowPositionals: true,
});
const source = resolve(
  positionals[0] ?? join(import.meta.dir, "..", "dist", `relay-${process.platform}-${process.arch}`),
);
try {
  statSync(source);
} catch {
  console.error(`smoke: no binary at ${source}; run 'bun scripts/build.ts' first`);
  process.exit(1);
}
/** The emulator command every run goes through (its program resolved now: the runs get no PATH). */
const emulator = (opts.emulator ?? "").split(/\s+/).filter(Boolean);
if (emulator[0]) {
  const found = Bun.which(emulator[0]);
  if (!found) {
    console.error(`smoke: emulator ${emulator[0]} not found`);
    process.exit(1);
  }
  emulator[0] = found;
}
// Emulated, the runtime runs several times slower, and start-up compiles more of it.
const STEP_MS = emulator.length ? 90_000 : 15_000;
/** `linux-arm64` from dist/relay-linux-arm64: what --version must name. */
const target = /relay-([a-z0-9-]+)$/.exec(source)?.[1];

const tmp = mkdtempSync(join(tmpdir(), "relay-smoke-"));
const bin = join(tmp, "bin", "relay");
const cwd = join(tmp, "elsewhere");
const data = join(tmp, "data");
for (const d of [join(tmp, "bin"), cwd, join(tmp, "tmp")]) mkdirSync(d);
copyFileSync(source, bin);
chmodSync(bin, 0o755);
const env: Record<string, string> = { PATH: "/nonexistent", HOME: tmp, TMPDIR: join(tmp, "tmp") };

/** Runs a command to its end: `out` is all it printed, `stdout` its standard output alone. */
function run(args: string[]): { code: number; out: string; stdout: string } {
  const r = Bun.spawnSync({
    cmd: [...emulator, bin, ...args],
    cwd,
    env,
    stdout: "pipe",
    stderr: "pipe",
    timeout: STEP_MS,
  });
  const stdout = r.stdout.toString();
  const out = stdout + r.stderr.toString();
  if (r.exitCode === null)
    fail(`'relay ${args.join(" ")}' did not finish (${r.signalCode ?? "killed"}):\n${out}`);
  return { code: r.exitCode, out, stdout };
}

function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Running {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  output: () => string;
  port: number;
  /** ms from spawn to the first NIP-11 answer */
  startup: number;
  nip11: Record<string, unknown>;
}

const children = new Set<Bun.Subprocess>();

/** Starts the relay; `wrap` runs it through another command (given the relay's command line). */
async function start(
  wrap?: (cmd: string[]) => { cmd: string[]; env: Record<string, string> },
  dir = data,
): Promise<Running> {
  const port = freePort();
  const t0 = performance.now();
  const serve = [...emulator, bin, "serve", "--host", "127.0.0.1", "--port", String(port), "--data", dir];
  const how = wrap ? wrap(serve) : { cmd: serve, env };
  const proc = Bun.spawn({
    cmd: how.cmd,
    cwd,
    env: how.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.add(proc);
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const text = new TextDecoder();
    for await (const chunk of s) out += text.decode(chunk, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const output = () => out.trim().replace(/^/gm, "    | ");
  while (performance.now() - t0 < STEP_MS) {
    if (proc.exitCode !== null) fail(`relay exited with ${proc.exitCode} during start-up:\n${output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: "application/nostr+json" } });
      if (res.ok) {
        const startup = performance.now() - t0;
        const nip11 = (await res.json()) as Record<string, unknown>;
        return { proc, output, port, startup, nip11 };
      }
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
  return fail(`no NIP-11 answer on port ${port} within ${STEP_MS} ms:\n${output()}`);
}

async function stop(r: Running): Promise<void> {
  r.proc.kill("SIGTERM");
  const code = await Promise.race([r.proc.exited, sleep(STEP_MS).then(() => "timeout" as const)]);
  children.delete(r.proc);
  if (code === "timeout") fail(`relay did not exit within ${STEP_MS} ms of SIGTERM:\n${r.output()}`);
  if (code !== 0) fail(`relay exited with ${code} after SIGTERM (expected 0):\n${r.output()}`);
}

/** A WebSocket that queues incoming frames so a step can wait for the one it expects. */
async function connect(url: string) {
  const ws = new WebSocket(url);
  const frames: unknown[][] = [];
  let wake = () => {};
  ws.onmessage = (m) => {
    frames.push(JSON.parse(String(m.data)) as unknown[]);
    wake();
  };
  await new Promise<void>((ok, bad) => {
    ws.onopen = () => ok();
    ws.onerror = () => bad(new SmokeError(`WebSocket to ${url} failed`));
  });
  const next = async (what: string, match: (f: unknown[]) => boolean): Promise<unknown[]> => {
    const deadline = performance.now() + STEP_MS;
    for (;;) {
      const i = frames.findIndex(match);
      if (i >= 0) return frames.splice(i, 1)[0]!;
      const left = deadline - performance.now();
      if (left <= 0) fail(`no ${what} within ${STEP_MS} ms; got ${JSON.stringify(frames).slice(0, 500)}`);
      await Promise.race([new Promise<void>((r) => (wake = r)), sleep(Math.min(left, 100))]);
    }
  };
  return { ws, send: (f: unknown[]) => ws.send(JSON.stringify(f)), next };
}

async function queryById(port: number, id: string): Promise<void> {
  const c = await connect(`ws://127.0.0.1:${port}`);
  c.send(["REQ", "smoke", { ids: [id] }]);
  const ev = await c.next("EVENT for the published id", (f) => f[0] === "EVENT" && f[1] === "smoke");
  if ((ev[2] as { id?: string }).id !== id) fail(`REQ returned ${JSON.stringify(ev)}, expected event ${id}`);
  await c.next("EOSE", (f) => f[0] === "EOSE" && f[1] === "smoke");
  c.ws.close();
}

/** The explorer page and its script are embedded in the binary (text imports) and served. */
async function checkExplorer(port: number): Promise<void> {
  const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: "text/html" } });
  const html = await page.text();
  const script = /src="(\/explorer\/app\.[^"]+\.js)"/.exec(html)?.[1];
  if (!page.ok || !script)
    fail(`GET / did not return the explorer page: ${page.status} ${html.slice(0, 300)}`);
  const js = await fetch(`http://127.0.0.1:${port}${script}`);
  if (!js.ok || (await js.text()).length < 1000) fail(`GET ${script} answered ${js.status}`);
}

async function main(): Promise<string> {
  const size = statSync(bin).size;

  const version = run(["--version"]);
  checkVersion(version.code, version.out.trim());

  const help = run(["--help"]);
  const commands = [...(help.out.split(/^commands:$/m)[1] ?? "").matchAll(/^ {2}(\S+)\s/gm)].map(
    (m) => m[1]!,
  );
  if (help.code !== 0 || commands.length === 0) fail(`'relay --help' listed no commands:\n${help.out}`);
  for (const cmd of commands) {
    const r = run([cmd, "--help"]);
    if (r.code !== 0) fail(`'relay ${cmd} --help' exited ${r.code}:\n${r.out}`);
  }

  // Use a verify worker thread even on a one-core machine, where the default is in-thread.
  if (run(["config", "--print-default"]).out.includes("RELAY_VERIFY_THREADS")) env.RELAY_VERIFY_THREADS = "1";

  const first = await start();
  if (!Array.isArray(first.nip11.supported_nips) || !first.nip11.supported_nips.includes(1))
    fail(`NIP-11 document lacks supported_nips with 1: ${JSON.stringify(first.nip11).slice(0, 300)}`);
  const mapSize = startupLine(first);
  await checkExplorer(first.port);

  const event = note(`smoke ${crypto.randomUUID()}`);
  await publish(first.port, event);
  await refusesBadSignature(first.port);
  await queryById(first.port, event.id);
  await consumersApplied(first.port);
  await stop(first);

  const second = await start();
  await queryById(second.port, event.id);
  // Under an emulator the relay cannot start its own file again the way it runs (it says so).
  const upgraded = emulator.length === 0 ? await upgradeInPlace(second) : "upgrade not tried (emulated)";
  if (emulator.length > 0) await stop(second);

  const roundTrip = importExport();
  const embedded = await embeddedLibrary();

  return (
    `smoke: ok${opts.emulator ? ` under ${opts.emulator}` : ""}: ` +
    `${commands.length} commands, NIP-11, map ${mapSize}, explorer page, EVENT/OK, bad signature refused, REQ/EOSE, ` +
    `consumers' thread (/metrics), SIGTERM exit 0, event kept across restart, ${upgraded}, ${roundTrip}, ${embedded}` +
    ` (binary ${(size / 2 ** 20).toFixed(1)} MiB; first NIP-11 answer ${Math.round(first.startup)} ms after spawn,` +
    ` ${Math.round(second.startup)} ms on restart)`
  );
}

/** `relay <version> <target> binary (Bun <v>); libsecp256k1 built in: … (<Debian arch>)`. */
function checkVersion(code: number, out: string): void {
  const m = /^relay (\S+) (\S+) binary \(Bun (\S+)\); libsecp256k1 built in: (.+)$/.exec(out);
  const debArch = { x64: "amd64", arm64: "arm64" }[target?.split("-")[1] ?? ""];
  const problem =
    code !== 0
      ? `exit ${code}`
      : !m
        ? "not the expected shape"
        : m[1] !== pkg.version
          ? `version ${m[1]}, expected ${pkg.version}`
          : target && m[2] !== target
            ? `target ${m[2]}, the file is named for ${target}`
            : m[3] !== Bun.version
              ? `Bun ${m[3]}, expected ${Bun.version}`
              : target?.startsWith("linux-") && debArch && !m[4]!.endsWith(`(${debArch})`)
                ? `the built-in libsecp256k1 is not Debian's of ${debArch}`
                : undefined;
  if (problem) fail(`'relay --version' printed '${out}': ${problem}`);
}

/**
 * The start-up line names the map size chosen, and says the runtime settings are applied: by
 * executing itself again natively, so they come from the environment, or, under an emulator,
 * that it runs without them instead of leaving the emulation. Returns the map size.
 */
function startupLine(r: Running): string {
  const line =
    r
      .output()
      .split("\n")
      .find((l) => l.includes("relay listening on")) ?? "";
  const mapSize = /mapSize="(\d+ GiB) per environment/.exec(line)?.[1];
  const runtime = /runtime="([^"]*)"/.exec(line)?.[1] ?? "";
  if (!mapSize) fail(`the start-up line names no map size:\n${line}`);
  if (emulator.length ? !/^without .*emulator/.test(runtime) : runtime !== "settings from the environment")
    fail(
      `the start-up line says runtime="${runtime}"${emulator.length ? " under an emulator" : ""}:\n${line}`,
    );
  return mapSize!;
}

/** An event whose signature is another event's: refused as invalid by whichever backend verifies. */
async function refusesBadSignature(port: number): Promise<void> {
  const bad = { ...note("bad signature"), sig: note("other").sig };
  const c = await connect(`ws://127.0.0.1:${port}`);
  c.send(["EVENT", bad]);
  const ok = await c.next("OK for the badly signed event", (f) => f[0] === "OK" && f[1] === bad.id);
  c.ws.close();
  if (ok[2] !== false || !String(ok[3]).startsWith("invalid:"))
    fail(`a bad signature was answered ${JSON.stringify(ok)}, expected OK false "invalid: …"`);
}

/**
 * `relay import` of a file into an empty data directory, then `relay export`: the same bytes back
 * (oldest first, as the file is), through the binary's verification and its writer.
 */
function importExport(): string {
  const events = roundTripEvents();
  const file = join(tmp, "events.jsonl");
  const jsonl = events.map((e) => `${storedJson(e)}\n`).join("");
  writeFileSync(file, jsonl);
  const dir = join(tmp, "imported");
  const imported = run(["import", file, "--data", dir, "--quiet", "--json"]);
  let accepted: unknown;
  try {
    accepted = (JSON.parse(imported.stdout) as { accepted?: unknown }).accepted;
  } catch {
    // reported below
  }
  if (imported.code !== 0 || accepted !== events.length)
    fail(`'relay import' of ${events.length} events gave exit ${imported.code}:\n${imported.out}`);
  const exported = run(["export", "--data", dir, "--quiet"]);
  if (exported.code !== 0 || exported.stdout !== jsonl)
    fail(
      `'relay export' after 'relay import' gave exit ${exported.code} and other bytes than were imported:\n${exported.out.slice(0, 1500)}`,
    );
  return `import then export byte-identical (${events.length} events)`;
}

/**
 * `relay upgrade` while a subscriber is connected: the relay starts its own file again with
 * --takeover, the new process listens on the same port, the subscriber (still on the old one)
 * hears an event published through the new one, and the old one exits 0 once it is gone.
 */
async function upgradeInPlace(old: Running): Promise<string> {
  const sub = await connect(`ws://127.0.0.1:${old.port}`);
  sub.send(["REQ", "live", { kinds: [1], since: Math.floor(Date.now() / 1000) - 5 }]);
  await sub.next("EOSE before the upgrade", (f) => f[0] === "EOSE" && f[1] === "live");
  const up = run(["upgrade", "--data", data, "--timeout", String(STEP_MS / 1000)]);
  const pid = Number(/^relay (\d+) serves /m.exec(up.out)?.[1]);
  if (up.code !== 0 || !pid) fail(`'relay upgrade' gave exit ${up.code}:\n${up.out}\n${old.output()}`);
  const stopNew = async () => {
    process.kill(pid, "SIGTERM");
    const end = performance.now() + STEP_MS;
    while (isAlive(pid)) {
      if (performance.now() > end)
        fail(`the upgraded relay (pid ${pid}) did not exit within ${STEP_MS} ms of SIGTERM`);
      await sleep(20);
    }
  };
  try {
    const later = note(`after the upgrade ${crypto.randomUUID()}`);
    await publish(old.port, later);
    await sub.next("the event stored by the new process, live on the old one", (f) => {
      return f[0] === "EVENT" && f[1] === "live" && (f[2] as { id?: string }).id === later.id;
    });
    sub.ws.close();
    const code = await Promise.race([old.proc.exited, sleep(STEP_MS).then(() => "timeout" as const)]);
    children.delete(old.proc);
    if (code !== 0)
      fail(`the old relay ended with ${code} after its last connection closed:\n${old.output()}`);
    await queryById(old.port, later.id);
  } finally {
    await stopNew();
  }
  return "upgrade in place (a subscriber kept across it)";
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function publish(port: number, event: { id: string }): Promise<void> {
  const c = await connect(`ws://127.0.0.1:${port}`);
  c.send(["EVENT", event]);
  const ok = await c.next("OK for the published event", (f) => f[0] === "OK" && f[1] === event.id);
  if (ok[2] !== true) fail(`relay refused the event: ${JSON.stringify(ok)}`);
  c.ws.close();
}

/**
 * With every host libsecp256k1 out of reach (an empty file bind-mounted over each, in a mount
 * namespace of its own), the binary must say at start-up that it uses the copy it carries, and
 * verify with it: a good event stored, a bad signature refused. Hiding needs root and
 * unshare(1); where there is something to hide and no way to, the check is reported as skipped.
 */
async function embeddedLibrary(): Promise<string> {
  if (process.platform !== "linux") return "embedded libsecp256k1 not checked (not Linux)";
  const libs = libraryFiles(emulator);
  let wrap: Parameters<typeof start>[0];
  if (libs.length > 0) {
    if (process.getuid?.() !== 0 || !existsSync("/usr/bin/unshare"))
      return "embedded libsecp256k1 not checked (needs root and unshare to hide the host's)";
    const probe = Bun.spawnSync({
      cmd: ["/usr/bin/unshare", "-m", "/bin/true"],
      stdout: "ignore",
      stderr: "pipe",
    });
    if (probe.exitCode !== 0)
      return `embedded libsecp256k1 not checked (no mount namespace here: ${probe.stderr.toString().trim()})`;
    const empty = join(tmp, "empty");
    writeFileSync(empty, "");
    const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    wrap = (cmd) => ({
      cmd: [
        "/usr/bin/unshare",
        "-m",
        "--propagation",
        "private",
        "/bin/sh",
        "-c",
        [
          ...libs.map((l) => `mount --bind ${q(empty)} ${q(l)} || exit 97`),
          `exec env PATH=/nonexistent ${cmd.map(q).join(" ")}`,
        ].join("; "),
      ],
      env: { ...env, PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    });
  }
  const r = await start(wrap);
  const line = r.output();
  if (!/libsecp256k1 from the copy of .+ embedded in this binary/.test(line))
    fail(
      `with the host's libsecp256k1 out of reach (${libs.join(", ") || "it has none"}), the start-up line does not name the embedded copy:\n${line}`,
    );
  await publish(r.port, note(`embedded ${crypto.randomUUID()}`));
  await refusesBadSignature(r.port);
  await stop(r);
  return `native verification with the embedded libsecp256k1 and the host's out of reach (${libs.length} file(s) hidden): a good event stored, a bad signature refused`;
}

/** The consumers' thread (a worker entry point of the binary) applies what was committed. */
async function consumersApplied(port: number): Promise<void> {
  const want = 'relay_consumer_batches_total{consumer="search"} ';
  for (let i = 0; i < 100; i++) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(want));
    if (line && Number(line.slice(want.length)) >= 1) return;
    await Bun.sleep(50);
  }
  fail("the derived indexes applied nothing within 5 s (the consumers' thread did not run)");
}

let code = 0;
try {
  console.log(await main());
} catch (e) {
  console.error(`smoke: FAILED: ${e instanceof SmokeError ? e.message : ((e as Error).stack ?? String(e))}`);
  code = 1;
} finally {
  for (const p of children) p.kill("SIGKILL");
}
if (code === 0) rmSync(tmp, { recursive: true, force: true });
else console.error(`smoke: files kept in ${tmp}`);
process.exit(code);
