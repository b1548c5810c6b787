// kill -9 while the relay removes events for a retention rule or for the disk budget. A real
// relay process is given a data directory full of old events and a rule (or a budget) that makes
// most of them due, and is killed with SIGKILL as soon as /metrics counts the first removals.
// After a restart with no rule and no budget: every removal it had counted is still gone (the
// count is taken after each removal's commit is on disk), `relay check` finds nothing, and REQ by
// ids, authors, kinds and tags, search and COUNT all agree on what is left. Started again with
// the rule, it finishes the job and they still agree.
import { describe, expect, test } from "bun:test";
import { agreeing, dataCorpus, importFile } from "./crash-check.ts";
import { tempDir } from "./harness.ts";
import { metric, serve, until } from "./procs.ts";

const NOTES = 4800;

/** Consumers that apply nothing before the kill: the restart replays the removal log. */
const LAZY = {
  RELAY_CONSUMERS_INTERVAL_MS: "600000",
  RELAY_CONSUMERS_MAX_BATCH: "1000000",
  RELAY_CONSUMERS_IDLE_MS: "0",
};

const cases: { name: string; by: "rule" | "budget"; env: Record<string, string> }[] = [
  {
    name: "a time rule, the derived indexes applying as usual",
    by: "rule",
    env: { RELAY_RETENTION_RULES: '[{"kinds":[1],"time":86400}]', RELAY_RETENTION_INTERVAL_SECONDS: "1" },
  },
  {
    name: "a time rule, the derived indexes applying nothing before the kill",
    by: "rule",
    env: {
      RELAY_RETENTION_RULES: '[{"kinds":[1],"time":86400}]',
      RELAY_RETENTION_INTERVAL_SECONDS: "1",
      ...LAZY,
    },
  },
  // 1 MiB: far below the data, so eviction goes on for many rounds.
  { name: "the disk budget", by: "budget", env: { RELAY_STORE_MAX_DISK_GB: String(1 / 1024) } },
];

describe("kill -9 during removals", () => {
  for (const [i, c] of cases.entries())
    test(`removals survive a kill -9 and a restart: ${c.name}`, async () => {
      const dir = tempDir();
      const corpus = dataCorpus(dir, 40 + i, 16, NOTES / 16);
      const data = `${dir}/data`;
      expect(await importFile(data, corpus.file)).toMatchObject({ accepted: corpus.events.length });

      const first = await serve(data, c.env);
      const sample = `relay_events_removed_total{by="${c.by}"}`;
      let counted = 0;
      await until(`the first removals (${sample})`, async () => {
        counted = (await metric(first.url, sample)) ?? 0;
        return counted > 0;
      });
      first.proc.kill("SIGKILL");
      expect(await first.proc.exited).not.toBe(0);

      // No rule, no budget: what is left is what the killed relay left, and it agrees everywhere.
      const again = await serve(data);
      const left = await agreeing(again.url, data, corpus);
      expect(corpus.events.length - left.size).toBeGreaterThanOrEqual(counted);
      if (c.by === "rule") {
        // Only notes are due; every reaction is still there.
        const reactions = corpus.events.filter((e) => e.kind === 7);
        expect(reactions.filter((e) => !left.has(e.id))).toEqual([]);
      }
      again.proc.kill("SIGTERM");
      expect(await again.proc.exited).toBe(0);

      if (c.by !== "rule") return;
      // With the rule again: every note goes, and everything still agrees.
      const last = await serve(data, c.env);
      await until(
        "every note to be removed",
        async () => (await metric(last.url, sample)) === NOTES - (corpus.events.length - left.size),
      );
      last.proc.kill("SIGTERM");
      expect(await last.proc.exited).toBe(0);
      const check = await serve(data);
      const end = await agreeing(check.url, data, corpus);
      expect([...end].sort()).toEqual(
        corpus.events
          .filter((e) => e.kind === 7)
          .map((e) => e.id)
          .sort(),
      );
      check.proc.kill("SIGTERM");
      expect(await check.proc.exited).toBe(0);
    }, 120_000);
});
