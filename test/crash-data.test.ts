// kill -9 during the data commands and during a rebuild of the derived indexes, at a moment drawn
// from a seeded PRNG (the seed is in each test's name; CRASH_SEED and CRASH_SEEDS replay or
// widen the run). Odd seeds run `relay import` and `relay delete` beside a running relay, even
// seeds alone. After the kill a relay serves the directory and `agreeing` checks that the log
// and every index hold the same events, each once; then what the killed command promised:
// - import: every event its progress lines reported accepted on disk (the first N of the file)
//   is there; importing the file again adds exactly the rest, and once more nothing;
// - delete: whole batches are gone, oldest first, at least what its progress lines reported,
//   nothing else; running it again finishes;
// - reindex and a relay rebuilding at start: the next start completes the indexes;
// - compact and backup: the source is untouched and DEST holds no data.mdb unless it is a
//   whole, checked copy; run again, the copy serves every event.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { markStale } from "../src/store/consumer.ts";
import { closeStore, DERIVED_DIR, openStore } from "../src/store/store.ts";
import type { DataCorpus } from "./crash-check.ts";
import { agreeing, dataCorpus, importFile } from "./crash-check.ts";
import { Gen } from "./gen.ts";
import { tempDir } from "./harness.ts";
import { cli, serve, spawnCli, stop, until } from "./procs.ts";

const SEEDS = Number(process.env.CRASH_SEEDS ?? 3);
const FIRST_SEED = Number(process.env.CRASH_SEED ?? 11);
const seeds = Array.from({ length: SEEDS }, (_, i) => FIRST_SEED + i);

const newDir = (): string => tempDir("relay-crash-");

/** A corpus file outside the data directory. */
function corpusFor(seed: number): DataCorpus {
  return dataCorpus(newDir(), seed);
}

/** The log and indexes agree: at once without a relay beside, else once it has followed. */
async function settled(url: string, dir: string, corpus: DataCorpus): Promise<Set<string>> {
  let last: unknown;
  await until(
    () => `the relay to serve what the other process committed; last: ${(last as Error)?.message}`,
    () =>
      agreeing(url, dir, corpus).then(
        () => true,
        (e: unknown) => {
          last = e;
          return false;
        },
      ),
  );
  return agreeing(url, dir, corpus);
}

/** The largest number after `pattern` in any complete line of `text`. */
function largest(text: string, pattern: RegExp): number {
  let max = 0;
  for (const line of text.split("\n").slice(0, -1)) {
    const m = pattern.exec(line);
    if (m) max = Math.max(max, Number(m[1]!.replace(/,/g, "")));
  }
  return max;
}

const ACCEPTED = /([\d,]+) accepted on disk/;
const DELETED = /delete: ([\d,]+) deleted and committed/;

describe("kill -9 during relay import", () => {
  for (const seed of seeds)
    test(`what it reported on disk is there once, the indexes agree, importing again adds the rest (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const corpus = corpusFor(seed);
      const total = corpus.events.length;
      const dir = newDir();
      const beside = seed % 2 === 1 ? await serve(dir) : undefined;
      const killAt = Math.floor(total * (0.1 + 0.6 * g.next()));
      let err = "";
      const imp = spawnCli(
        ["import", corpus.file, "--no-verify", "--progress-every", "0.005", "--data", dir],
        {
          env: { RELAY_WRITER_MAX_BATCH: "16" },
          onStderr: (t) => {
            err += t;
            if (largest(err, ACCEPTED) >= killAt) imp.proc.kill("SIGKILL");
          },
        },
      );
      await imp.proc.exited;
      expect(imp.proc.signalCode).toBe("SIGKILL");
      const promised = largest(imp.stderr(), ACCEPTED);
      expect(promised).toBeGreaterThanOrEqual(killAt);

      const relay = beside ?? (await serve(dir));
      const present = await settled(relay.url, dir, corpus);
      expect(corpus.events.slice(0, promised).filter((e) => !present.has(e.id))).toEqual([]);
      const again = await importFile(dir, corpus.file);
      expect([again.accepted, again.duplicate]).toEqual([total - present.size, present.size]);
      expect((await importFile(dir, corpus.file)).accepted).toBe(0);
      expect((await settled(relay.url, dir, corpus)).size).toBe(total);
      await stop(relay);
    }, 60_000);
});

describe("kill -9 during relay delete", () => {
  for (const seed of seeds)
    test(`whole batches are deleted, oldest first, and running it again finishes (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const corpus = corpusFor(seed);
      const dir = newDir();
      const beside = seed % 2 === 1;
      let relay = beside ? await serve(dir) : undefined;
      await importFile(dir, corpus.file);
      const notes = corpus.events.filter((e) => e.kind === 1).sort((a, b) => a.created_at - b.created_at);
      const batch = 20;
      const killAt = Math.floor(notes.length * (0.1 + 0.6 * g.next()));
      let err = "";
      const del = spawnCli(
        [
          "delete",
          "--filter",
          '{"kinds":[1]}',
          "--batch",
          String(batch),
          "--progress-every",
          "0",
          "--data",
          dir,
        ],
        {
          onStderr: (t) => {
            err += t;
            if (largest(err, DELETED) >= killAt) del.proc.kill("SIGKILL");
          },
        },
      );
      await del.proc.exited;
      expect(del.proc.signalCode).toBe("SIGKILL");
      const promised = largest(del.stderr(), DELETED);
      expect(promised).toBeGreaterThanOrEqual(killAt);

      relay ??= await serve(dir);
      const present = await settled(relay.url, dir, corpus);
      const gone = corpus.events.filter((e) => !present.has(e.id));
      expect(gone.length % batch).toBe(0);
      expect(gone.length).toBeGreaterThanOrEqual(promised);
      expect(gone.map((e) => e.id).sort()).toEqual(
        notes
          .slice(0, gone.length)
          .map((e) => e.id)
          .sort(),
      );
      const rest = await cli(["delete", "--filter", '{"kinds":[1]}', "--data", dir]);
      expect(rest.code).toBe(0);
      expect(rest.out.split("\n").filter((l) => l !== "").length).toBe(notes.length - gone.length);
      const left = await settled(relay.url, dir, corpus);
      expect([...left].sort()).toEqual(
        corpus.events
          .filter((e) => e.kind === 7)
          .map((e) => e.id)
          .sort(),
      );
      await stop(relay);
    }, 60_000);
});

/** A directory holding the whole corpus, written without a relay, and the corpus. */
async function loaded(seed: number): Promise<{ dir: string; corpus: DataCorpus }> {
  const corpus = corpusFor(seed);
  const dir = newDir();
  expect((await importFile(dir, corpus.file)).accepted).toBe(corpus.events.length);
  return { dir, corpus };
}

describe("kill -9 during a rebuild of the derived indexes", () => {
  for (const seed of seeds) {
    test(`relay reindex killed part way: the next start completes every index (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const { dir, corpus } = await loaded(seed);
      // Four indexes of about 44 batches each: kill after one of the first 100 progress lines.
      const killAt = 1 + g.int(100);
      let err = "";
      const rx = spawnCli(["reindex", "--batch", "50", "--progress-every", "0", "--data", dir], {
        onStderr: (t) => {
          err += t;
          if (err.split("\n").length - 1 >= killAt) rx.proc.kill("SIGKILL");
        },
      });
      await rx.proc.exited;
      expect(rx.proc.signalCode).toBe("SIGKILL");
      const relay = await serve(dir);
      expect((await agreeing(relay.url, dir, corpus)).size).toBe(corpus.events.length);
      await stop(relay);
    }, 60_000);

    test(`a relay killed while it rebuilds at start (${seed % 2 ? "derived/ removed" : "consumers' versions changed"}) completes the rebuild at the next start (seed ${seed})`, async () => {
      const g = new Gen(seed);
      const { dir, corpus } = await loaded(seed);
      if (seed % 2) rmSync(join(dir, DERIVED_DIR), { recursive: true, force: true });
      else {
        const s = openStore(dir);
        for (const name of ["indexes", "search", "counters", "hll"]) markStale(s, name);
        await closeStore(s);
      }
      const first = spawnCli(["serve", "--port", "0", "--data", dir]);
      // Killed somewhere in its first 600 ms: during the rebuild, or soon after it.
      await Bun.sleep(50 + g.int(550));
      first.proc.kill("SIGKILL");
      await first.proc.exited;
      const relay = await serve(dir);
      expect((await agreeing(relay.url, dir, corpus)).size).toBe(corpus.events.length);
      await stop(relay);
    }, 60_000);
  }
});

describe("kill -9 during relay compact and relay backup", () => {
  for (const seed of seeds)
    for (const command of ["compact", "backup"] as const)
      test(`a killed ${command} leaves the source intact and no partial DEST/data.mdb; run again, the copy serves every event (seed ${seed})`, async () => {
        const g = new Gen(seed);
        const { dir, corpus } = await loaded(seed);
        // Odd seeds copy from under a running relay, even seeds from a stopped one.
        const beside = seed % 2 === 1 ? await serve(dir) : undefined;
        const dest = join(newDir(), "copy");
        const cp = spawnCli([command, dest, "--json", "--data", dir]);
        // Killed a seeded moment after the copy's file appears: while it is written or checked.
        const staged = join(dest, "incomplete", "data.mdb");
        await until("the copy to start", () => existsSync(staged) || cp.proc.exitCode !== null);
        await Bun.sleep(g.int(40));
        cp.proc.kill("SIGKILL");
        await cp.proc.exited;
        // A data.mdb in DEST is only ever a copy that checked out (published in one rename, which
        // a kill may follow before the process exits: then the staging is left empty at most);
        // without one, the next run starts over. Either way the copy serves every event below.
        if (cp.proc.exitCode === 0) expect(JSON.parse(cp.stdout())).toMatchObject({ ok: true });

        const relay = beside ?? (await serve(dir));
        expect((await agreeing(relay.url, dir, corpus)).size).toBe(corpus.events.length);
        await stop(relay);
        let finished = cp.proc.exitCode === 0;
        if (!existsSync(join(dest, "data.mdb"))) {
          const again = await cli([command, dest, "--json", "--data", dir]);
          expect([again.code, JSON.parse(again.out).ok]).toEqual([0, true]);
          finished = true;
        }
        // A run that finished leaves no staging; one killed after publishing, an empty one.
        const staging = join(dest, "incomplete");
        if (finished) expect(existsSync(staging)).toBe(false);
        else if (existsSync(staging)) expect(readdirSync(staging)).toEqual([]);
        const copy = await serve(dest);
        expect((await agreeing(copy.url, dest, corpus)).size).toBe(corpus.events.length);
        await stop(copy);
      }, 60_000);
});
