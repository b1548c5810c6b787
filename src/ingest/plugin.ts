// External write policy speaking strfry's plugin protocol, so existing strfry plugins run
// unchanged: one JSON line per event in ({type, event, receivedAt, sourceType, sourceInfo,
// authed}), one line out ({id, action: accept | reject | shadowReject, msg}). The process is
// restarted when it dies or its file changes; a hung or dead plugin gets the configured
// fail-open or fail-closed answer after a timeout, never a stuck relay.
import type { FSWatcher } from "node:fs";
import { existsSync, watch } from "node:fs";
import type { Subprocess } from "bun";
import type { NostrEvent } from "../nostr/event.ts";

export type PluginAction = "accept" | "reject" | "shadowReject";
export interface PluginVerdict {
  action: PluginAction;
  msg: string;
}

interface Waiter {
  resolve: (v: PluginVerdict) => void;
  timer: ReturnType<typeof setTimeout>;
  /** the request line, kept so a plugin that exits mid-request can be asked again once */
  line: string;
  retried: boolean;
}

export interface PluginOptions {
  command: string;
  timeoutMs: () => number;
  failOpen: () => boolean;
  log?: (msg: string) => void;
}

export class PolicyPlugin {
  private proc: Subprocess<"pipe", "pipe", "inherit"> | undefined;
  private waiters = new Map<string, Waiter[]>();
  private watcher: FSWatcher | undefined;
  private closed = false;

  constructor(private readonly opts: PluginOptions) {
    const file = opts.command.split(/\s+/)[0]!;
    if (existsSync(file))
      this.watcher = watch(file, () => {
        opts.log?.(`policy plugin ${file} changed; restarting it`);
        this.restart();
      });
  }

  private failVerdict(why: string): PluginVerdict {
    return this.opts.failOpen()
      ? { action: "accept", msg: "" }
      : { action: "reject", msg: `error: write policy unavailable (${why})` };
  }

  private start(): Subprocess<"pipe", "pipe", "inherit"> {
    const proc = Bun.spawn(["sh", "-c", `exec ${this.opts.command}`], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    this.proc = proc;
    void this.readLines(proc);
    void proc.exited.then((code) => {
      if (this.proc !== proc) return;
      this.proc = undefined;
      if (!this.closed) this.opts.log?.(`policy plugin exited with code ${code}`);
      this.retryOrFail("plugin exited");
    });
    return proc;
  }

  private async readLines(proc: Subprocess<"pipe", "pipe", "inherit">): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl = buf.indexOf("\n");
      while (nl !== -1) {
        this.answer(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
    }
  }

  private answer(line: string): void {
    let out: { id?: unknown; action?: unknown; msg?: unknown };
    try {
      out = JSON.parse(line);
    } catch {
      this.opts.log?.(`policy plugin wrote a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (typeof out.id !== "string") return;
    const queue = this.waiters.get(out.id);
    const w = queue?.shift();
    if (!w) return;
    if (queue?.length === 0) this.waiters.delete(out.id);
    clearTimeout(w.timer);
    const action = out.action === "accept" || out.action === "shadowReject" ? out.action : "reject";
    w.resolve({ action, msg: typeof out.msg === "string" ? out.msg : "" });
  }

  /** Asks a fresh process once more for requests a dead one left unanswered. */
  private retryOrFail(why: string): void {
    if (this.closed) {
      this.failAll(why);
      return;
    }
    const again = [...this.waiters.values()].flat().filter((w) => !w.retried);
    for (const w of [...this.waiters.values()].flat())
      if (w.retried) {
        clearTimeout(w.timer);
        w.resolve(this.failVerdict(why));
      }
    this.waiters = new Map(
      [...this.waiters]
        .map(([id, q]) => [id, q.filter((w) => !w.retried)] as const)
        .filter(([, q]) => q.length > 0),
    );
    if (again.length === 0) return;
    try {
      const proc = this.start();
      for (const w of again) {
        w.retried = true;
        proc.stdin.write(w.line);
      }
      proc.stdin.flush();
    } catch {
      this.failAll(why);
    }
  }

  private failAll(why: string): void {
    const all = [...this.waiters.values()].flat();
    this.waiters.clear();
    for (const w of all) {
      clearTimeout(w.timer);
      w.resolve(this.failVerdict(why));
    }
  }

  /** Asks the plugin about one event. Always resolves. */
  check(e: NostrEvent, sourceInfo: string, authed?: string): Promise<PluginVerdict> {
    return new Promise((resolve) => {
      let proc: Subprocess<"pipe", "pipe", "inherit">;
      try {
        proc = this.proc ?? this.start();
      } catch (err) {
        resolve(this.failVerdict((err as Error).message));
        return;
      }
      const timer = setTimeout(() => {
        const queue = this.waiters.get(e.id);
        const i = queue?.indexOf(w) ?? -1;
        if (i >= 0) queue!.splice(i, 1);
        if (queue?.length === 0) this.waiters.delete(e.id);
        resolve(this.failVerdict("timed out"));
        this.restart(); // a plugin that stops answering is presumed hung
      }, this.opts.timeoutMs());
      const request = {
        type: "new",
        event: e,
        receivedAt: Math.floor(Date.now() / 1000),
        sourceType: sourceInfo.includes(":") ? "IP6" : "IP4",
        sourceInfo,
        authed: authed ?? "",
      };
      const line = `${JSON.stringify(request)}\n`;
      const w: Waiter = { resolve, timer, line, retried: false };
      const queue = this.waiters.get(e.id) ?? [];
      queue.push(w);
      this.waiters.set(e.id, queue);
      try {
        proc.stdin.write(line);
        proc.stdin.flush();
      } catch {
        // the exit handler answers every waiter
      }
    });
  }

  restart(): void {
    const proc = this.proc;
    this.proc = undefined;
    proc?.kill();
    this.failAll("restarting");
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.restart();
  }
}

declare module "../context.ts" {
  interface RelayContext {
    /** the operator's policy plugin (ingest.plugin), if any */
    plugin: PolicyPlugin | undefined;
  }
}
