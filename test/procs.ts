// The CLI as tests run it: src/main.ts under the same Bun, as a child process — run to its end,
// watched as it runs, or `relay serve` until it listens — and the relay's /metrics.
import { expect } from "bun:test";
import { cleanup } from "./harness.ts";

const MAIN = new URL("../src/main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** How a command ended and what it printed. */
export interface Run {
  code: number;
  out: string;
  err: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** all of its standard input */
  stdin?: string;
  /** a command that runs the CLI (its arguments follow), e.g. a shell setting a ulimit first */
  via?: string[];
  /** Bun's own flags, before the script (`bun --cpu-prof src/main.ts …`) */
  bunFlags?: string[];
}

/** Our environment without a developer's RELAY_NSEC or colours, then `env`. */
function childEnv(env: Record<string, string> = {}): Record<string, string | undefined> {
  const { RELAY_NSEC: _, ...rest } = process.env;
  return { ...rest, NO_COLOR: "1", ...env };
}

const input = (stdin: string | undefined) => (stdin === undefined ? "ignore" : Buffer.from(stdin));
const command = (args: string[], o: Pick<CliOptions, "via" | "bunFlags">) => [
  ...(o.via ?? []),
  process.execPath,
  ...(o.bunFlags ?? []),
  MAIN,
  ...args,
];

function killLater(proc: Bun.Subprocess): void {
  cleanup(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  });
}

/** Runs a command to its end, blocking this process: only for commands that need none of it. */
export function cliSync(args: string[], o: CliOptions = {}): Run {
  const p = Bun.spawnSync(command(args, o), {
    cwd: ROOT,
    env: childEnv(o.env),
    stdin: input(o.stdin),
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** Runs a command to its end while this process (and the relays it runs) goes on. */
export async function cli(args: string[], o: CliOptions = {}): Promise<Run> {
  const proc = Bun.spawn(command(args, o), {
    cwd: ROOT,
    env: childEnv(o.env),
    stdin: input(o.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  killLater(proc);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out, err };
}

export interface Spawned<In extends "ignore" | "pipe" = "ignore"> {
  proc: Bun.Subprocess<In, "pipe", "pipe">;
  /** what it wrote to stdout so far */
  stdout(): string;
  /** what it wrote to stderr so far */
  stderr(): string;
  /** its exit code, once all it wrote is read */
  exited(): Promise<number>;
}

export interface SpawnOptions<In extends "ignore" | "pipe"> extends Omit<CliOptions, "stdin"> {
  /** "pipe": the test writes to `proc.stdin` */
  stdin?: In;
  /** not killed after the test: the caller stops it (cluster nodes live across tests) */
  keep?: boolean;
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
}

/** Collects a stream into a string as it comes; resolves at its end. */
async function collect(stream: ReadableStream<Uint8Array>, onText: (t: string) => void): Promise<void> {
  const dec = new TextDecoder();
  try {
    for await (const chunk of stream) onText(dec.decode(chunk, { stream: true }));
  } catch {
    // killed mid-write
  }
}

/** A command as a process of its own; `onStdout`/`onStderr` see its output as it comes. */
export function spawnCli<In extends "ignore" | "pipe" = "ignore">(
  args: string[],
  o: SpawnOptions<In> = {},
): Spawned<In> {
  const proc = Bun.spawn(command(args, o), {
    cwd: ROOT,
    env: childEnv(o.env),
    stdin: o.stdin ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  }) as Bun.Subprocess<In, "pipe", "pipe">;
  if (!o.keep) killLater(proc);
  let out = "";
  let err = "";
  const read = Promise.all([
    collect(proc.stdout, (t) => {
      out += t;
      o.onStdout?.(t);
    }),
    collect(proc.stderr, (t) => {
      err += t;
      o.onStderr?.(t);
    }),
  ]);
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited: async () => {
      const code = await proc.exited;
      await read;
      return code;
    },
  };
}

export interface Served extends Spawned {
  /** the ws:// URL it listens on */
  url: string;
}

/** Starts the CLI with `args` and resolves once it says where it listens. */
export async function listen(args: string[], o: SpawnOptions<"ignore"> = {}): Promise<Served> {
  const s = spawnCli(args, o);
  for (;;) {
    const url = /listening on (ws:\/\/\S+)/.exec(s.stdout())?.[1];
    if (url) return { ...s, url };
    if (s.proc.exitCode !== null || s.proc.signalCode !== null)
      throw new Error(`relay exited ${await s.exited()}: ${s.stderr()}`);
    await Bun.sleep(20);
  }
}

/** Starts `relay serve` on `dir` (port 0) and resolves once it listens. */
export function serve(dir: string, env: Record<string, string> = {}): Promise<Served> {
  return listen(["serve", "--port", "0", "--data", dir], { env });
}

/** SIGTERM; it must exit 0, and what it printed to stderr otherwise is in the failure. */
export async function stop(s: Spawned): Promise<void> {
  s.proc.kill("SIGTERM");
  const code = await s.exited();
  expect({ code, stderr: code === 0 ? "" : s.stderr() }).toEqual({ code: 0, stderr: "" });
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
