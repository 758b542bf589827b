// Builds go into a fresh folder beside their target and are swapped in here, so a relay or a
// ravenctl running from the same checkout never meets a missing or half-written file: each file
// is renamed over its old copy (a rename is atomic: a reader opens the old file or the new one,
// never none), and only then are the files the new build no longer has removed. Deleting the
// target first, as tsc, vite's emptyOutDir and the old scripts did, broke every process that
// loaded a module meanwhile ("Cannot find module .../dist/esm/index.js").
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

/** A new, empty folder beside `target` (the same file system, so renames work): `<parent>/.build-<name>-<pid>`. */
export function freshBuildDir(target) {
  const dir = path.join(path.dirname(target), `.build-${path.basename(target)}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

function relativeFiles(root, dir = root, out = new Set()) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) relativeFiles(root, full, out);
    else out.add(path.relative(root, full));
  }
  return out;
}

/**
 * Moves every file of `fresh` into `target`, then removes what `target` has beyond them, except
 * the top-level entries named in `keep` (another build's output, such as dist/web), and `fresh`.
 */
export function swapIn(fresh, target, { keep = [] } = {}) {
  const files = relativeFiles(fresh);
  for (const file of files) {
    const to = path.join(target, file);
    mkdirSync(path.dirname(to), { recursive: true });
    if (existsSync(to) && statSync(to).isDirectory()) rmSync(to, { recursive: true, force: true });
    renameSync(path.join(fresh, file), to);
  }
  const removeStale = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(target, full);
      if (dir === target && keep.includes(entry.name)) continue;
      if (entry.isDirectory()) {
        removeStale(full);
        if (readdirSync(full).length === 0) rmSync(full, { recursive: true, force: true });
      } else if (!files.has(rel)) rmSync(full, { force: true });
    }
  };
  removeStale(target);
  rmSync(fresh, { recursive: true, force: true });
}
