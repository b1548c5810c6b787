// The target a compiled binary was built for (`linux-arm64`): none when running from source.
// The build (scripts/build.ts) replaces this module, as it replaces src/verify/embedded.ts with
// the libsecp256k1 it embeds; `relay --version` names both.

/** `<platform>-<arch>[-musl]` of the binary, or undefined under `bun src/main.ts`. */
export const builtFor: string | undefined = undefined;
