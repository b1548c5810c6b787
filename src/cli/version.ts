// `relay --version`: the version, what the binary was built for and the signature library it
// carries, so an operator can tell which file of a release is installed (docs/operations.md).
import pkg from "../../package.json" with { type: "json" };
import { embeddedFrom } from "../verify/embedded.ts";
import { builtFor } from "./built-for.ts";

export function versionText(): string {
  const target = builtFor ? `${builtFor} binary` : `from source on ${process.platform}-${process.arch}`;
  const lib = embeddedFrom
    ? `libsecp256k1 built in: ${embeddedFrom}`
    : "no libsecp256k1 built in (the host's is used if it has one)";
  return `relay ${pkg.version} ${target} (Bun ${Bun.version}); ${lib}`;
}
