// The relay under test as a child process: `bun src/main.ts --port P --data D [flags]` from the
// given tree, its output copied to a log file, ready once it prints its start-up line
// ("relay listening on ws://…"), stopped with SIGINT (its clean shutdown) and, if that does not
// end it in time, SIGKILL.
import type { FileSink, Subprocess } from "bun";

export interface RelayExit {
  code: number | null;
  signal: string | null;
  /** it had exited before it was asked to stop (crashed, or killed: by the OOM killer, say) */
  beforeStop: boolean;
  /** it needed SIGKILL after SIGINT */
  killed: boolean;
}

export interface Relay {
  pid: number;
  url: string;
  /** the start-up line as printed */
  startLine: string;
  exited(): boolean;
  stop(graceMs?: number): Promise<RelayExit>;
}

const READY = /relay listening on (wss?:\/\/\S+)/;

async function pump(stream: ReadableStream<Uint8Array>, log: FileSink, onText: (s: string) => void) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    log.write(chunk);
    onText(decoder.decode(chunk, { stream: true }));
  }
}

export async function startRelay(o: {
  cmd: string[];
  cwd: string;
  logFile: string;
  timeoutMs: number;
}): Promise<Relay> {
  const log = Bun.file(o.logFile).writer();
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(o.cmd, {
    cwd: o.cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let seen = "";
  let ready: ((line: string) => void) | undefined;
  const started = new Promise<string>((r) => {
    ready = r;
  });
  const onText = (s: string) => {
    if (!ready) return;
    // Only the start-up line matters, and it comes first: keep the head of the output.
    seen = (seen + s).slice(-64 * 1024);
    const line = seen.split("\n").find((l) => READY.test(l));
    if (line) {
      ready(line);
      ready = undefined;
    }
  };
  const output = Promise.all([pump(proc.stdout, log, onText), pump(proc.stderr, log, onText)]);
  let exitedAt: number | undefined;
  void proc.exited.then(() => {
    exitedAt = Date.now();
  });
  const line = await Promise.race([
    started,
    proc.exited.then(() => undefined),
    Bun.sleep(o.timeoutMs).then(() => null),
  ]);
  if (typeof line !== "string") {
    proc.kill("SIGKILL");
    await proc.exited;
    await output.catch(() => {});
    await log.end();
    throw new Error(
      `the relay ${line === null ? `printed no start-up line in ${o.timeoutMs / 1000} s` : `exited with ${proc.exitCode ?? proc.signalCode}`}` +
        `; its output is in ${o.logFile}:\n${seen.slice(-2000)}`,
    );
  }
  const url = READY.exec(line)![1]!;
  return {
    pid: proc.pid,
    url,
    startLine: line,
    exited: () => exitedAt !== undefined,
    async stop(graceMs = 60_000): Promise<RelayExit> {
      const beforeStop = exitedAt !== undefined;
      let killed = false;
      if (!beforeStop) {
        proc.kill("SIGINT");
        const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
        if (!done) {
          killed = true;
          proc.kill("SIGKILL");
          await proc.exited;
        }
      }
      await output.catch(() => {});
      await log.end();
      return {
        code: proc.exitCode,
        signal: proc.signalCode === null ? null : String(proc.signalCode),
        beforeStop,
        killed,
      };
    },
  };
}
