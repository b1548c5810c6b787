import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configDoc } from "./doc.ts";
import { ConfigError, loadConfig, parseConfigFile, sampleConfig } from "./load.ts";
import type { RetentionRule } from "./retention.ts";
import { SCHEMA } from "./schema.ts";

// The config files these tests write, removed with their directory at the end.
const dir = mkdtempSync(join(tmpdir(), "relay-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("configuration", () => {
  test("defaults serve ws://127.0.0.1:7777 with data in ./data", () => {
    const c = loadConfig();
    expect([c.host, c.port, c.data]).toEqual(["127.0.0.1", 7777, "./data"]);
  });

  test("flags win over environment, and environment over the config file", () => {
    const file = join(dir, "flags-env-file.toml");
    writeFileSync(file, 'port = 1111\nhost = "0.0.0.0"\ndata = "/from/file"\n[limits]\nmaxLimit = 4200\n');
    const c = loadConfig({
      file,
      env: { RELAY_PORT: "2222", RELAY_DATA: "/from/env" },
      flags: { data: "/from/flag" },
    });
    expect([c.port, c.host, c.data, c["limits.maxLimit"]]).toEqual([2222, "0.0.0.0", "/from/flag", 4200]);
  });

  test("every key has a generated environment variable and takes a flag of its own name", () => {
    const c = loadConfig({ env: { RELAY_LIMITS_MAX_LIMIT: "7" }, flags: { "limits.defaultLimit": "3" } });
    expect([c["limits.maxLimit"], c["limits.defaultLimit"]]).toEqual([7, 3]);
  });

  const bad: [string, () => unknown, RegExp][] = [
    [
      "a non-numeric port",
      () => loadConfig({ flags: { port: "abc" } }),
      /port \(from flag\): expected an integer/,
    ],
    [
      "a port out of range",
      () => loadConfig({ env: { RELAY_PORT: "70000" } }),
      /port \(from env\): must be at most 65535/,
    ],
    ["an unknown flag", () => loadConfig({ flags: { nope: "1" } }), /unknown option --nope/],
    [
      "an unknown file key",
      () => loadConfig({ file: writeTemp("[limits]\nnope = 1\n") }),
      /unknown setting 'limits.nope'/,
    ],
    [
      "a wrongly typed file value",
      () => loadConfig({ file: writeTemp('port = "x"\n') }),
      /port \(from file\)/,
    ],
    ["invalid TOML", () => parseConfigFile("port = = 1", "x.toml"), /x.toml/],
    ["a missing file", () => loadConfig({ file: "/nonexistent/relay.toml" }), /cannot read config file/],
    [
      "a default limit above the maximum",
      () => loadConfig({ flags: { "limits.defaultLimit": "10", "limits.maxLimit": "5" } }),
      /defaultLimit must not exceed/,
    ],
  ];
  for (const [what, load, message] of bad) {
    test(`${what} is a ConfigError naming the key`, () => {
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(message);
    });
  }

  test("pubkeys may be written as npub and are kept as hex, in lists, tables and single values", () => {
    const hex = "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d";
    const npub = "npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6";
    const c = loadConfig({
      file: writeTemp(
        `[info]\npubkey = "${npub}"\n[policy]\npubkeyAllow = ["${npub}", "${hex.toUpperCase()}"]\n` +
          `[rate]\nexemptPubkeys = ["${npub}"]\n[nip05.names]\nbob = "${npub}"\n` +
          `[nip05.relays]\n"${npub}" = ["wss://relay.example.com"]\n`,
      ),
    });
    expect(c["info.pubkey"]).toBe(hex);
    expect(c["policy.pubkeyAllow"]).toEqual([hex, hex]);
    expect(c["rate.exemptPubkeys"]).toEqual([hex]);
    expect(c["nip05.names"]).toEqual({ bob: hex });
    expect(c["nip05.relays"]).toEqual({ [hex]: ["wss://relay.example.com"] });
  });

  const refused: [string, string, string][] = [
    [
      "a NIP-05 name mapped to something not a pubkey",
      '[nip05.names]\nalice = "3bf0"\nbob = "nobody"\n',
      "line 2: nip05.names (from file): '3bf0' is not a pubkey (64 hex digits or an npub)",
    ],
    [
      "a relay hint that is not a ws URL",
      `[nip05.relays]\n${"a".repeat(64)} = ["https://x.example"]\n`,
      "line 2: nip05.relays (from file): 'https://x.example' must be a ws or wss URL",
    ],
    [
      "a publicUrl that does not parse",
      'publicUrl = "wss//relay"\n',
      "line 1: publicUrl (from file): 'wss//relay' is not a URL",
    ],
    [
      "an icon that is not http(s)",
      '[info]\nicon = "ftp://x/y.png"\n',
      "line 2: info.icon (from file): 'ftp://x/y.png' must be a http or https URL",
    ],
    [
      "a pubkey deny list with an nsec",
      `[policy]\npubkeyDeny = ["nsec1abc"]\n`,
      "line 2: policy.pubkeyDeny (from file): 'nsec1abc' is not a pubkey (64 hex digits or an npub)",
    ],
    [
      "a trusted proxy that is not an address",
      '[http]\ntrustedProxies = ["10.0.0.0/33"]\n',
      "line 2: http.trustedProxies (from file): '10.0.0.0/33' has a bad prefix length (0 to 32)",
    ],
    [
      "an unknown log level",
      '[log]\nlevel = "verbose"\n',
      "line 2: log.level (from file): expected one of error, warn, info, debug, got 'verbose'",
    ],
    [
      "a cluster okAfter other than local or stream",
      '[cluster]\nokAfter = "quorum"\n',
      "line 2: cluster.okAfter (from file): expected one of local, stream, got 'quorum'",
    ],
    [
      "a NATS address with a path",
      '[cluster]\nnatsUrl = "nats://10.0.0.5:4222, http://x/y"\n',
      "line 2: cluster.natsUrl (from file): 'http://x/y' is not a NATS server address (nats://host:port)",
    ],
    [
      "a stream name NATS would refuse",
      '[cluster]\nstream = "nostr.events"\n',
      "line 2: cluster.stream (from file): 'nostr.events' is not a stream name (letters, digits, _ and -)",
    ],
    [
      "a retention rule with an unknown field",
      "[retention]\nrules = [{kinds = [1], time = 60}, {kinds = [7], age = 5}]\n",
      "line 2: retention.rules (from file): rule 2: unknown field 'age' (a rule has kinds, time and count)",
    ],
    [
      "a retention rule with a backward range of kinds",
      "[retention]\nrules = [{kinds = [[40, 30]], count = 5}]\n",
      "line 2: retention.rules (from file): rule 1 kinds: the range [40, 30] starts after it ends",
    ],
    [
      "a retention rule with a negative time",
      "[retention]\nrules = [{time = -1}]\n",
      "line 2: retention.rules (from file): rule 1: time must be a whole number of seconds, 0 or more (or null for no limit), got -1",
    ],
    [
      "a retention rule with an empty list of kinds",
      "[retention]\nrules = [{kinds = [], count = 5}]\n",
      "line 2: retention.rules (from file): rule 1: kinds must be a non-empty list (leave it out for every kind)",
    ],
    [
      "a disk budget that is not a number",
      '[store]\nmaxDiskGb = "ten"\n',
      "line 2: store.maxDiskGb (from file): expected a number, got ten",
    ],
    [
      "a pinned author that is not a pubkey",
      '[store]\npinAuthors = ["bob"]\n',
      "line 2: store.pinAuthors (from file): 'bob' is not a pubkey (64 hex digits or an npub)",
    ],
  ];
  for (const [what, text, message] of refused) {
    test(`${what} is refused naming the line, the key and why`, () => {
      const file = writeTemp(text);
      expect(() => loadConfig({ file })).toThrow(`${file} ${message}`);
    });
  }

  test("retention rules are NIP-11's list, written inline, as tables of their own, or as JSON in the environment", () => {
    const rules: RetentionRule[] = [
      { kinds: [0, 1, [5, 7]], time: 3600 },
      { kinds: [[30000, 39999]], count: 1000 },
      { count: 10000 },
    ];
    const inline = loadConfig({
      file: writeTemp(
        "[retention]\nrules = [{kinds = [0, 1, [5, 7]], time = 3600}, {kinds = [[30000, 39999]], count = 1000}, {count = 10000}]\n",
      ),
    });
    const tables = loadConfig({
      file: writeTemp(
        "[[retention.rules]]\nkinds = [0, 1, [5, 7]]\ntime = 3600\n[[retention.rules]]\nkinds = [[30000, 39999]]\ncount = 1000\n[[retention.rules]]\ncount = 10000\n",
      ),
    });
    const env = loadConfig({ env: { RELAY_RETENTION_RULES: JSON.stringify(rules) } });
    expect([inline["retention.rules"], tables["retention.rules"], env["retention.rules"]]).toEqual([
      rules,
      rules,
      rules,
    ]);
    expect(() => loadConfig({ env: { RELAY_RETENTION_RULES: "{kinds:1}" } })).toThrow(
      'retention.rules (from env): expected a JSON list of rules like [{"kinds":[1],"time":3600}], got {kinds:1}',
    );
    expect(loadConfig()["retention.rules"]).toEqual([]);
  });

  test("the disk budget is off by default and takes a fraction of a GiB", () => {
    expect(loadConfig()["store.maxDiskGb"]).toBe(0);
    expect(loadConfig({ env: { RELAY_STORE_MAX_DISK_GB: "0.5" } })["store.maxDiskGb"]).toBe(0.5);
    expect(() => loadConfig({ flags: { "store.maxDiskGb": "-1" } })).toThrow(
      "store.maxDiskGb (from flag): must be at least 0",
    );
  });

  test("a TOML syntax error names the line it is on", () => {
    const cases: [string, number][] = [
      ["port = 1\n[limits]\nmaxLimit = = 2\n", 3],
      ['[info]\nname = "x"\n\n[policy]\nkindAllow = [\n  1,\n  2,\n]\ndescription = "open\n', 9],
      ["[limits\nmaxLimit = 1\n", 1],
      ['[policy]\nkindDeny = [1, 2\nplugin = ""\n', 3],
    ];
    for (const [text, line] of cases)
      expect(() => parseConfigFile(text, "relay.toml")).toThrow(new RegExp(`^relay.toml line ${line}: TOML`));
  });

  test("the sample config parses back to the defaults", () => {
    const parsed = parseConfigFile(sampleConfig(), "sample");
    for (const [k, e] of Object.entries(SCHEMA)) expect(parsed[k]).toEqual(e.default);
  });

  test("docs/configuration.md matches the schema (run bun scripts/config-doc.ts)", () => {
    const committed = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    expect(committed).toBe(configDoc());
  });
});

function writeTemp(text: string): string {
  const f = join(dir, `${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(f, text);
  return f;
}
