// `relay config --print-default`: the documented sample configuration, generated from the schema.
import { sampleConfig } from "../config/load.ts";

export const help = `relay config --print-default

Prints every setting with its default, its one-line doc and its environment variable, as TOML.`;

export async function run(argv: string[]): Promise<number> {
  if (!argv.includes("--print-default")) {
    console.error(help);
    return 2;
  }
  process.stdout.write(sampleConfig());
  return 0;
}
