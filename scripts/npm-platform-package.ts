// A native addon package of another platform (@lmdb/lmdb-linux-arm64 on an x64 build machine),
// fetched for the build. `npm ci` installs only the build machine's own; the lockfile lists every
// platform's with its integrity, so the build fetches the one it needs with `npm pack` into
// .build-cache/npm/ and refuses a tarball whose sha512 differs from the lockfile's. Nothing in
// node_modules is touched.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

interface LockEntry {
  version?: string;
  integrity?: string;
}

/** The lockfile's entry for `name`, if it lists one at `version`. */
export function lockedPackage(root: string, name: string, version: string): LockEntry | undefined {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages?: Record<string, LockEntry>;
  };
  const entry = lock.packages?.[`node_modules/${name}`];
  return entry?.version === version ? entry : undefined;
}

/**
 * The directory of `name@version` unpacked under `cacheDir`, fetched with `npm pack` when it is
 * not there yet. Throws when the lockfile does not list it at that version, or the tarball's
 * integrity differs from the lockfile's.
 */
export function fetchPlatformPackage(root: string, cacheDir: string, name: string, version: string): string {
  const dir = join(cacheDir, "npm", `${name.replace("/", "+")}@${version}`);
  const pkgDir = join(dir, "package");
  if (existsSync(join(pkgDir, "package.json"))) return pkgDir;
  const locked = lockedPackage(root, name, version);
  if (!locked?.integrity?.startsWith("sha512-"))
    throw new Error(
      `package-lock.json lists no ${name}@${version} with a sha512 integrity to check it against`,
    );
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const pack = Bun.spawnSync({
    cmd: ["npm", "pack", `${name}@${version}`, "--pack-destination", staging, "--json", "--silent"],
    cwd: staging,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (pack.exitCode !== 0)
    throw new Error(`npm pack ${name}@${version} failed:\n${pack.stderr.toString().trim()}`);
  const [{ filename }] = JSON.parse(pack.stdout.toString()) as [{ filename: string }];
  const tarball = join(staging, filename);
  const got = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  if (got !== locked.integrity)
    throw new Error(
      `${name}@${version}: the fetched tarball is ${got}, package-lock.json says ${locked.integrity}`,
    );
  const untar = Bun.spawnSync({ cmd: ["tar", "-xzf", tarball, "-C", staging], stderr: "pipe" });
  if (untar.exitCode !== 0) throw new Error(`unpacking ${tarball} failed: ${untar.stderr.toString().trim()}`);
  rmSync(tarball);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return pkgDir;
}
