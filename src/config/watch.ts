// Notices changes to the config file however they are made: written in place, or replaced by a
// new file renamed over it (vim, `sed -i`, Ansible, `mv new relay.toml`). A watch on the file
// follows its inode, which a rename leaves behind, so the directory is watched and events are
// filtered by name. Editors write in several steps; one call follows once they settle.
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";

export function watchConfigFile(file: string, changed: () => void, settleMs = 200): FSWatcher {
  const path = resolve(file);
  const name = basename(path);
  let pending: ReturnType<typeof setTimeout> | undefined;
  const watcher = watch(dirname(path), (_event, f) => {
    // Some platforms give no name; a spurious reload of an unchanged file changes nothing.
    if (f !== null && f !== name) return;
    clearTimeout(pending);
    pending = setTimeout(changed, settleMs);
  });
  watcher.unref();
  return watcher;
}
