// Smoke test of the compiled relay: `bun scripts/smoke.ts [dist/relay]` (after `bun scripts/build.ts`).
// Copies the binary into a fresh temporary directory and runs it from another directory with an
// environment holding nothing but PATH=/nonexistent, HOME and TMPDIR, so it can reach no bun, node
// or node_modules. Checks: --version, every command's --help (each command is a lazily imported
// module that must be inside the binary), NIP-11, the explorer page and its script, an event
// published over WebSocket (signature checked in a verify worker thread when the relay has them)
// and queried back, SIGTERM exiting 0, and the event still there after a restart; then, where it
// can hide the host's libsecp256k1 (as root, in a mount namespace), that the binary verifies with
// the copy it carries. Exits non-zero with a message on the first failure.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import pkg from "../package.json" with { type: "json" };

const STEP_MS = 15_000;

class SmokeError extends Error {}
const fail = (msg: string): never => {
  throw new SmokeError(msg);
};

const source = resolve(process.argv[2] ?? join(import.meta.dir, "..", "dist", "relay"));
try {
  statSync(source);
} catch {
  console.error(`smoke: no binary at ${source}; run 'bun scripts/build.ts' first`);
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), "relay-smoke-"));
const bin = join(tmp, "bin", "relay");
const cwd = join(tmp, "elsewhere");
const data = join(tmp, "data");
for (const d of [join(tmp, "bin"), cwd, join(tmp, "tmp")]) mkdirSync(d);
copyFileSync(source, bin);
chmodSync(bin, 0o755);
const env: Record<string, string> = { PATH: "/nonexistent", HOME: tmp, TMPDIR: join(tmp, "tmp") };

function run(args: string[]): { code: number; out: string } {
  const r = Bun.spawnSync({
    cmd: [bin, ...args],
    cwd,
    env,
    stdout: "pipe",
    stderr: "pipe",
    timeout: STEP_MS,
  });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode === null)
    fail(`'relay ${args.join(" ")}' did not finish (${r.signalCode ?? "killed"}):\n${out}`);
  return { code: r.exitCode, out };
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
): Promise<Running> {
  const port = freePort();
  const t0 = performance.now();
  const serve = [bin, "serve", "--host", "127.0.0.1", "--port", String(port), "--data", data];
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
  if (version.code !== 0 || version.out.trim() !== pkg.version)
    fail(
      `'relay --version' gave exit ${version.code}, output '${version.out.trim()}', expected ${pkg.version}`,
    );

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
  await checkExplorer(first.port);

  const event = finalizeEvent(
    { kind: 1, created_at: Math.floor(Date.now() / 1000), tags: [], content: `smoke ${crypto.randomUUID()}` },
    generateSecretKey(),
  );
  await publish(first.port, event);
  await queryById(first.port, event.id);
  await consumersApplied(first.port);
  await stop(first);

  const second = await start();
  await queryById(second.port, event.id);
  await stop(second);

  const embedded = await embeddedLibrary();

  return (
    `smoke: ok: ${commands.length} commands, NIP-11, explorer page, EVENT/OK, REQ/EOSE, consumers' thread, SIGTERM exit 0, event kept across restart, ${embedded}` +
    ` (binary ${(size / 2 ** 20).toFixed(1)} MiB; first NIP-11 answer ${Math.round(first.startup)} ms after spawn,` +
    ` ${Math.round(second.startup)} ms on restart)`
  );
}

async function publish(port: number, event: { id: string }): Promise<void> {
  const c = await connect(`ws://127.0.0.1:${port}`);
  c.send(["EVENT", event]);
  const ok = await c.next("OK for the published event", (f) => f[0] === "OK" && f[1] === event.id);
  if (ok[2] !== true) fail(`relay refused the event: ${JSON.stringify(ok)}`);
  c.ws.close();
}

/** Every libsecp256k1 file the host's loader could find, resolved (what must be hidden). */
function hostLibraries(): string[] {
  const found = new Set<string>();
  const ldconfig = Bun.spawnSync({ cmd: ["/sbin/ldconfig", "-p"], stdout: "pipe", stderr: "ignore" });
  const listed = [...ldconfig.stdout.toString().matchAll(/libsecp256k1\S*.*=> (\S+)/g)].map((m) => m[1]!);
  const dirs = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"];
  const arch = ["x86_64-linux-gnu", "aarch64-linux-gnu"];
  const guesses = dirs
    .flatMap((d) => [d, ...arch.map((a) => `${d}/${a}`)])
    .flatMap((d) => ["libsecp256k1.so", "libsecp256k1.so.1", "libsecp256k1.so.2"].map((f) => `${d}/${f}`));
  for (const f of [...listed, ...guesses]) if (existsSync(f)) found.add(realpathSync(f));
  return [...found];
}

/**
 * With every host libsecp256k1 hidden (an empty file bind-mounted over each, in a mount namespace
 * of its own), the binary must say at start-up that it uses the copy it carries, and verify with
 * it. Needs root and unshare(1); elsewhere the check is reported as skipped.
 */
async function embeddedLibrary(): Promise<string> {
  if (process.platform !== "linux") return "embedded libsecp256k1 not checked (not Linux)";
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/unshare"))
    return "embedded libsecp256k1 not checked (needs root and unshare to hide the host's)";
  const libs = hostLibraries();
  if (libs.length === 0) return "embedded libsecp256k1 not checked (the build machine has none to embed)";
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
  const r = await start((cmd) => ({
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
  }));
  const line = r.output();
  if (!/libsecp256k1 from the copy of \S+ embedded in this binary/.test(line))
    fail(
      `with the host's libsecp256k1 hidden (${libs.join(", ") || "none found"}), the start-up line does not name the embedded copy:\n${line}`,
    );
  const event = finalizeEvent(
    {
      kind: 1,
      created_at: Math.floor(Date.now() / 1000),
      tags: [],
      content: `embedded ${crypto.randomUUID()}`,
    },
    generateSecretKey(),
  );
  await publish(r.port, event);
  await stop(r);
  return `native verification with the host's library hidden (${libs.length} file(s)) using the embedded copy`;
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
