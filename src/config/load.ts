// Loads configuration: defaults < TOML file (--config) < environment < command-line flags.
// Every value is checked against the schema; errors name the key and where it came from.
import { readFileSync } from "node:fs";
import * as nip19 from "nostr-tools/nip19";
import { CheckError, checkValue } from "./check.ts";
import type { Config, Key } from "./schema.ts";
import { entries, envNames, SCHEMA } from "./schema.ts";

export class ConfigError extends Error {
  constructor(
    message: string,
    /** the entry of a table key that failed (nip05.names.<entry>), to find its line */
    readonly entry?: string,
  ) {
    super(message);
  }
}

export function defaults(): Config {
  const out: Record<string, unknown> = {};
  for (const [k, e] of entries()) out[k] = structuredClone(e.default);
  return out as Config;
}

/** A value of the key's type, then checked (and normalised: npub → hex) by check.ts. */
function coerce(key: Key, raw: unknown, from: string): unknown {
  const typed = coerceType(key, raw, from);
  try {
    return checkValue(key, typed);
  } catch (e) {
    if (!(e instanceof CheckError)) throw e;
    throw new ConfigError(`${key} (from ${from}): ${e.message}`, e.entry);
  }
}

function coerceType(key: Key, raw: unknown, from: string): unknown {
  const e = SCHEMA[key];
  const fail = (why: string) => new ConfigError(`${key} (from ${from}): ${why}`);
  const fromString = typeof raw === "string" && from !== "file";
  switch (e.type) {
    case "string":
      if (typeof raw !== "string") throw fail("expected a string");
      return raw;
    case "int": {
      const n = fromString ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isSafeInteger(n))
        throw fail(`expected an integer, got ${String(raw)}`);
      if ("min" in e && e.min !== undefined && n < e.min) throw fail(`must be at least ${e.min}`);
      if ("max" in e && e.max !== undefined && n > e.max) throw fail(`must be at most ${e.max}`);
      return n;
    }
    case "number": {
      const n = fromString ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isFinite(n) || (fromString && (raw as string).trim() === ""))
        throw fail(`expected a number, got ${String(raw)}`);
      if ("min" in e && e.min !== undefined && n < e.min) throw fail(`must be at least ${e.min}`);
      if ("max" in e && e.max !== undefined && n > e.max) throw fail(`must be at most ${e.max}`);
      return n;
    }
    case "bool":
      if (fromString) {
        if (raw === "true" || raw === "1") return true;
        if (raw === "false" || raw === "0") return false;
      }
      if (typeof raw !== "boolean") throw fail("expected true or false");
      return raw;
    case "string[]": {
      const arr = fromString ? (raw as string).split(",").filter((x) => x !== "") : raw;
      if (!Array.isArray(arr) || !arr.every((x) => typeof x === "string"))
        throw fail("expected a list of strings");
      return arr;
    }
    case "int[]": {
      const arr = fromString
        ? (raw as string)
            .split(",")
            .filter((x) => x !== "")
            .map(Number)
        : raw;
      if (!Array.isArray(arr) || !arr.every((x) => Number.isSafeInteger(x)))
        throw fail("expected a list of integers");
      return arr;
    }
    case "table":
    case "table[]": {
      let obj = raw;
      if (typeof raw === "string" && from !== "file") {
        try {
          obj = JSON.parse(raw);
        } catch {
          throw fail("expected a JSON object");
        }
      }
      if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw fail("expected a table");
      for (const [k, v] of Object.entries(obj)) {
        const ok =
          e.type === "table"
            ? typeof v === "string"
            : Array.isArray(v) && v.every((x: unknown) => typeof x === "string");
        if (!ok) throw fail(`${k} must be ${e.type === "table" ? "a string" : "a list of strings"}`);
      }
      return obj;
    }
    case "rules":
      // From the environment or a flag: the NIP-11 JSON itself. checkValue checks each rule.
      if (fromString)
        try {
          return JSON.parse(raw as string);
        } catch {
          throw fail(`expected a JSON list of rules like [{"kinds":[1],"time":3600}], got ${String(raw)}`);
        }
      return raw;
    default:
      return e satisfies never;
  }
}

/** Flattens TOML tables into dotted keys: [limits] maxLimit = 1 → limits.maxLimit. */
function flatten(obj: Record<string, unknown>, prefix = "", out: Record<string, unknown> = {}) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v) && !(key in SCHEMA))
      flatten(v as Record<string, unknown>, key, out);
    else out[key] = v;
  }
  return out;
}

export function parseConfigFile(text: string, path: string): Record<string, unknown> {
  let parsed: Record<string, unknown>;
  try {
    parsed = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    // Bun's TOML error carries no line of the document (its `line` is the caller's), so find it.
    const line = syntaxErrorLine(text, (e as Error).message);
    throw new ConfigError(`${path}${line === undefined ? "" : ` line ${line}`}: ${(e as Error).message}`);
  }
  return flatten(parsed);
}

/**
 * The 1-based line of a TOML syntax error: the first line at which the text cut there fails with
 * the same message. A cut inside a valid multi-line array fails too, but with an "unterminated"
 * or "end of file" message, so it is passed over; failing that, the first cut that fails.
 */
export function syntaxErrorLine(text: string, message: string): number | undefined {
  const lines = text.split("\n");
  let firstFailing: number | undefined;
  for (let n = 1; n <= lines.length; n++) {
    try {
      // Each cut keeps its line's newline: some errors are found at that newline.
      Bun.TOML.parse(`${lines.slice(0, n).join("\n")}\n`);
    } catch (e) {
      if ((e as Error).message === message) return n;
      firstFailing ??= n;
    }
  }
  return firstFailing;
}

export interface Sources {
  file?: string;
  env?: Record<string, string | undefined>;
  flags?: Record<string, string>;
}

export function loadConfig(src: Sources = {}): Config {
  const cfg = defaults() as Record<string, unknown>;
  const apply = (layer: Record<string, unknown>, from: string) => {
    for (const [k, v] of Object.entries(layer)) {
      if (!(k in SCHEMA)) throw new ConfigError(`unknown setting '${k}' (from ${from})`);
      cfg[k] = coerce(k as Key, v, from);
    }
  };
  if (src.file) {
    let text: string;
    try {
      text = readFileSync(src.file, "utf8");
    } catch (e) {
      throw new ConfigError(`cannot read config file ${src.file}: ${(e as Error).message}`);
    }
    const layer = parseConfigFile(text, src.file);
    for (const [k, v] of Object.entries(layer)) {
      try {
        apply({ [k]: v }, "file");
      } catch (e) {
        const entry = e instanceof ConfigError ? e.entry : undefined;
        const line = (entry !== undefined ? lineOf(text, `${k}.${entry}`) : undefined) ?? lineOf(text, k);
        throw new ConfigError(`${src.file}${line ? ` line ${line}` : ""}: ${(e as Error).message}`);
      }
    }
  }
  const env = src.env ?? {};
  const fromEnv: Record<string, unknown> = {};
  for (const [k] of entries())
    for (const name of envNames(k)) if (env[name] !== undefined && env[name] !== "") fromEnv[k] = env[name];
  apply(fromEnv, "env");
  const fromFlags: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(src.flags ?? {})) {
    const key = entries().find(([k, e]) => k === name || e.flag === name)?.[0];
    if (!key) throw new ConfigError(`unknown option --${name}`);
    fromFlags[key] = v;
  }
  apply(fromFlags, "flag");
  if ((cfg["limits.defaultLimit"] as number) > (cfg["limits.maxLimit"] as number))
    throw new ConfigError("limits.defaultLimit must not exceed limits.maxLimit");
  cfg["management.admins"] = (cfg["management.admins"] as string[]).map(adminHex);
  return cfg as Config;
}

/** An admin pubkey as hex, from hex or npub (kept as hex so lookups are plain comparisons). */
function adminHex(raw: string): string {
  const v = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return v.toLowerCase();
  if (v.startsWith("npub1")) {
    try {
      const d = nip19.decode(v as `npub1${string}`);
      if (d.type === "npub") return d.data;
    } catch {}
  }
  throw new ConfigError(`management.admins: '${v}' is neither 64 hex characters nor a valid npub`);
}

/** The 1-based line where a dotted key is set in TOML text (tables tracked), or undefined. */
export function lineOf(text: string, key: string): number | undefined {
  const lines = text.split("\n");
  let table = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const header = /^\[([^\]]+)\]/.exec(line);
    if (header) {
      table = header[1]!.trim();
      continue;
    }
    const m = /^"?([A-Za-z0-9_.-]+)"?\s*=/.exec(line);
    if (m && (table ? `${table}.${m[1]}` : m[1]) === key) return i + 1;
  }
  return undefined;
}

/** A commented TOML sample with every key at its default. */
export function sampleConfig(): string {
  const lines: string[] = ["# Relay configuration. Every key is optional; shown at its default.", ""];
  let section = "";
  for (const [k, e] of entries()) {
    const dot = k.indexOf(".");
    const sec = dot === -1 ? "" : k.slice(0, dot);
    const name = dot === -1 ? k : k.slice(dot + 1);
    if (sec !== section) {
      lines.push("", `[${sec}]`);
      section = sec;
    }
    const restart = e.live ? "" : " (restart to change)";
    lines.push(`# ${e.doc}${restart}; env ${envNames(k).join(" or ")}`);
    lines.push(`${name} = ${JSON.stringify(e.default)}`);
  }
  return `${lines.join("\n")}\n`;
}
