import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configDoc } from "./doc.ts";
import { ConfigError, loadConfig, parseConfigFile, sampleConfig } from "./load.ts";
import { SCHEMA } from "./schema.ts";

describe("configuration", () => {
  test("defaults serve ws://127.0.0.1:7777 with data in ./data", () => {
    const c = loadConfig();
    expect([c.host, c.port, c.data]).toEqual(["127.0.0.1", 7777, "./data"]);
  });

  test("flags win over environment, and environment over the config file", () => {
    const file = join(tmpdir(), `relay-config-${process.pid}.toml`);
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
  const f = join(tmpdir(), `relay-config-${process.pid}-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(f, text);
  return f;
}
