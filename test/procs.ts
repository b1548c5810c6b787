// Process tests' helpers: `relay serve` and the data commands as real processes of their own on
// one data directory (src/main.ts under the same Bun), and the relay's /metrics.
import { afterAll } from "bun:test";

export const MAIN = new URL("../src/main.ts", import.meta.url).pathname;

const procs: Bun.Subprocess[] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
});

export interface Served {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** what it wrote to stderr so far (read continuously) */
  stderr(): string;
  /** what it wrote to stdout so far, the start-up line included */
  stdout(): string;
}

/** Collects a stream into a string as it comes. */
function collect(stream: ReadableStream<Uint8Array>, onText: (t: string) => void): void {
  const dec = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) onText(dec.decode(chunk, { stream: true }));
  })().catch(() => {});
}

/** Starts `relay serve` on `dir` (port 0) and resolves once it listens. */
export async function serve(dir: string, env: Record<string, string> = {}): Promise<Served> {
  const proc = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0", "--data", dir], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  procs.push(proc);
  let out = "";
  let err = "";
  collect(proc.stdout, (t) => {
    out += t;
  });
  collect(proc.stderr, (t) => {
    err += t;
  });
  for (;;) {
    const url = /listening on (ws:\/\/\S+)/.exec(out)?.[1];
    if (url) return { proc, url, stderr: () => err, stdout: () => out };
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`relay exited: ${err}`);
    await Bun.sleep(20);
  }
}

/** A data command as a process; `onStdout`/`onStderr` see its output as it comes. */
export function spawnCli(
  args: string[],
  o: { onStdout?: (t: string) => void; onStderr?: (t: string) => void; env?: Record<string, string> } = {},
) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: { ...process.env, ...o.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  procs.push(proc);
  let out = "";
  let err = "";
  collect(proc.stdout, (t) => {
    out += t;
    o.onStdout?.(t);
  });
  collect(proc.stderr, (t) => {
    err += t;
    o.onStderr?.(t);
  });
  return { proc, stdout: () => out, stderr: () => err };
}

/** Runs a data command to its end. */
export async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  procs.push(proc);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** One sample of the relay's /metrics (`name{labels}` as written), or undefined. */
export async function metric(url: string, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${url.replace(/^ws/, "http")}/metrics`)).text();
  for (const line of text.split("\n"))
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  return undefined;
}

/** Waits until `cond` holds (polled), failing with `what` after `ms`. */
export async function until(
  what: string | (() => string),
  cond: () => boolean | Promise<boolean>,
  ms = 20_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await Bun.sleep(50);
  }
}
