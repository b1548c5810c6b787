// A small argument reader shared by every command: `--key value`, `--key=value`, `--flag`.
export interface Args {
  positional: string[];
  flags: Record<string, string>;
}

export function parseArgs(argv: readonly string[], booleans: readonly string[] = []): Args {
  const out: Args = { positional: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith("--") || a === "-") {
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    if (eq !== -1) out.flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (booleans.includes(a.slice(2))) out.flags[a.slice(2)] = "true";
    else {
      const v = argv[i + 1];
      if (v === undefined) throw new Error(`option ${a} needs a value`);
      out.flags[a.slice(2)] = v;
      i++;
    }
  }
  return out;
}
