// Loaded into every test file's process by `npm test` (--import, with RAVEN_TEST_TEMP_GUARD=1):
// gives the file a temp folder of its own and fails it when anything is left in it at exit. Child
// processes inherit the folder through TMPDIR, which os.tmpdir() reads on every call.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';

// Only in the test file's own process: the processes it starts inherit its environment, not the role.
if (process.env.RAVEN_TEST_TEMP_GUARD === '1') {
  delete process.env.RAVEN_TEST_TEMP_GUARD;
  const shared = tmpdir();
  const own = mkdtempSync(path.join(shared, 'raven-test-'));
  // Traversable by other users (not listable): the PostgreSQL tests run their server as `postgres`
  // in a folder below this one.
  chmodSync(own, 0o711);
  // tsx keeps its compile cache in <tmp>/tsx-<euid>: the children a test starts through tsx keep
  // sharing the real one (a cache, not a leftover) instead of recompiling per file.
  const tsxCache = `tsx-${process.geteuid?.() ?? userInfo().username}`;
  mkdirSync(path.join(shared, tsxCache), { recursive: true });
  symlinkSync(path.join(shared, tsxCache), path.join(own, tsxCache));
  process.env.TMPDIR = own;
  process.on('exit', () => {
    const left = readdirSync(own).filter((name) => name !== tsxCache);
    rmSync(own, { recursive: true, force: true });
    if (left.length > 0) {
      process.stderr.write(`temp-guard: the tests left ${left.join(', ')} in the temp folder; remove them in after()\n`);
      process.exitCode = 1;
    }
  });
}
