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

/** A mistake in how a command was called: reported on stderr with the command's usage exit code. */
export class UsageError extends Error {}

/** Pulls every `--name V` / `--name=V` out of argv: parseArgs keeps only the last of a repeat. */
export function takeRepeated(argv: string[], name: string): { values: string[]; rest: string[] } {
  const values: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a.startsWith(`--${name}=`)) values.push(a.slice(name.length + 3));
    else if (a === `--${name}`) {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`option --${name} needs a value`);
      values.push(v);
    } else rest.push(a);
  }
  return { values, rest };
}

/** Resolves once stdout drains (or closes): how writers wait on a full pipe so nothing is lost. */
export function stdoutDrained(): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      process.stdout.off("drain", done);
      process.stdout.off("close", done);
      resolve();
    };
    process.stdout.on("drain", done);
    process.stdout.on("close", done);
  });
}
