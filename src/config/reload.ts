// Live reconfiguration: on SIGHUP or when the config file changes, the configuration is loaded
// again from the same sources. Keys marked live take effect at once (handlers read them per
// frame); keys that need a restart keep their running value and are reported. A bad file is
// reported with its key and line, and the configuration in force stays.
import type { Sources } from "./load.ts";
import { loadConfig } from "./load.ts";
import type { Config, Key } from "./schema.ts";
import { entries } from "./schema.ts";

export interface ReloadResult {
  config: Config;
  changed: Key[];
  /** keys that changed in the sources but need a restart; they keep their running value */
  ignored: Key[];
}

export function reloadConfig(current: Config, sources: Sources): ReloadResult {
  const next = loadConfig(sources) as Record<string, unknown>;
  const out = { ...current } as Record<string, unknown>;
  const changed: Key[] = [];
  const ignored: Key[] = [];
  for (const [k, e] of entries()) {
    if (JSON.stringify(next[k]) === JSON.stringify(current[k])) continue;
    if (e.live) {
      out[k] = next[k];
      changed.push(k);
    } else ignored.push(k);
  }
  return { config: out as Config, changed, ignored };
}
