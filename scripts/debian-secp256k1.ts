// The libsecp256k1 a Linux binary embeds: Debian's `libsecp256k1-1` package of the target's
// architecture, fetched with apt-get into .build-cache/debian/ and unpacked with `dpkg -x`. apt
// keeps its package lists for this in the cache too (its own Dir::State::Lists, with arm64 and
// amd64 both listed), so the build machine's apt configuration, lists and installed packages are
// left as they are. apt checks the lists' signatures and the .deb's hash as for any install.
// The first build fetches; later ones reuse the unpacked copy (remove .build-cache/debian/ to take
// a newer release).
import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

export interface EmbeddedLibrary {
  /** the shared object to embed */
  file: string;
  /** where it came from, for `relay --version` and the start-up line */
  label: string;
}

const DEB_ARCH = { x64: "amd64", arm64: "arm64" } as const;
const TRIPLET = { x64: "x86_64-linux-gnu", arm64: "aarch64-linux-gnu" } as const;
const PACKAGE = "libsecp256k1-1";

function run(cmd: string[], cwd?: string): { ok: boolean; out: string } {
  const r = Bun.spawnSync({ cmd, stdout: "pipe", stderr: "pipe", ...(cwd ? { cwd } : {}) });
  return { ok: r.exitCode === 0, out: (r.stdout.toString() + r.stderr.toString()).trim() };
}

/** apt-get options that keep its lists and downloads inside `aptDir`. */
function aptOptions(aptDir: string): string[] {
  const o = (kv: string) => ["-o", kv];
  return [
    ...o(`Dir::State::Lists=${join(aptDir, "lists")}`),
    ...o(`Dir::Cache=${join(aptDir, "cache")}`),
    ...o("APT::Architectures::=amd64"),
    ...o("APT::Architectures::=arm64"),
    // Our own directories: no lock on the system's, and no unprivileged _apt user to hand the
    // download to (it could not write the cache directory anyway).
    ...o("Debug::NoLocking=1"),
    ...o("APT::Sandbox::User=root"),
    "-qq",
  ];
}

/** The unpacked library of a .deb fetched earlier, if any. */
function unpacked(dir: string, arch: keyof typeof DEB_ARCH): EmbeddedLibrary | undefined {
  if (!existsSync(dir)) return undefined;
  for (const name of readdirSync(dir).sort().reverse()) {
    const m = /^libsecp256k1-1_(.+)_(amd64|arm64)$/.exec(name);
    const lib = join(dir, name, "usr", "lib", TRIPLET[arch], "libsecp256k1.so.1");
    if (!m || m[2] !== DEB_ARCH[arch] || !existsSync(lib)) continue;
    const file = realpathSync(lib);
    return { file, label: `${file.split("/").pop()} of Debian's ${PACKAGE} ${m[1]} (${m[2]})` };
  }
  return undefined;
}

/**
 * Debian's libsecp256k1 for `arch`, from the cache or fetched. Throws, saying why, when apt-get
 * or dpkg is missing or the package cannot be fetched.
 */
export function debianSecp256k1(cacheDir: string, arch: keyof typeof DEB_ARCH): EmbeddedLibrary {
  const dir = join(cacheDir, "debian");
  const cached = unpacked(dir, arch);
  if (cached) return cached;
  for (const tool of ["apt-get", "dpkg-deb"])
    if (!run(["sh", "-c", `command -v ${tool}`]).ok)
      throw new Error(`${tool} is not available to fetch Debian's ${PACKAGE}:${DEB_ARCH[arch]}`);
  const aptDir = join(dir, "apt");
  const debs = join(dir, "debs");
  for (const d of [join(aptDir, "lists", "partial"), join(aptDir, "cache", "archives", "partial"), debs])
    mkdirSync(d, { recursive: true });
  const opts = aptOptions(aptDir);
  const want = `${PACKAGE}:${DEB_ARCH[arch]}`;
  let got = run(["apt-get", ...opts, "download", want], debs);
  if (!got.ok) {
    // No lists yet, or they name a version the archive has since replaced.
    const update = run(["apt-get", ...opts, "update"]);
    if (!update.ok) throw new Error(`apt-get update (for ${want}) failed:\n${update.out}`);
    got = run(["apt-get", ...opts, "download", want], debs);
    if (!got.ok) throw new Error(`apt-get download ${want} failed:\n${got.out}`);
  }
  const deb = readdirSync(debs).find(
    (f) => f.startsWith(`${PACKAGE}_`) && f.endsWith(`_${DEB_ARCH[arch]}.deb`),
  );
  if (!deb) throw new Error(`apt-get download ${want} left no .deb in ${debs}`);
  const target = join(dir, deb.replace(/\.deb$/, ""));
  const staging = `${target}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const x = run(["dpkg-deb", "-x", join(debs, deb), staging]);
  if (!x.ok) throw new Error(`dpkg-deb -x ${deb} failed:\n${x.out}`);
  renameSync(staging, target);
  rmSync(join(debs, deb));
  const lib = unpacked(dir, arch);
  if (!lib) throw new Error(`${deb} holds no usr/lib/${TRIPLET[arch]}/libsecp256k1.so.1`);
  return lib;
}
