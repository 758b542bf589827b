// Before `npm test`: the PostgreSQL run of the suite needs the server binaries (initdb, postgres).
// When they are missing and we are root (CI: a fresh Debian machine with Node and apt-get), this
// installs Debian's postgresql package without letting it create or start a cluster of its own
// (the tests start their own server in a temporary directory). Without root it says what to do.
// RAVEN_TEST_DATABASE_URL (an existing server) makes the binaries unnecessary.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';

function hasBinaries() {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian) && readdirSync(debian).some((v) => existsSync(`${debian}/${v}/bin/initdb`))) return true;
  return spawnSync('sh', ['-c', 'command -v initdb && command -v postgres'], { stdio: 'ignore' }).status === 0;
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with ${result.status ?? result.signal}`);
}

if (!process.env.RAVEN_TEST_DATABASE_URL && !hasBinaries()) {
  if (process.getuid?.() !== 0) {
    console.error('PostgreSQL is not installed and this is not root: install it (apt-get install postgresql) or set RAVEN_TEST_DATABASE_URL.');
    process.exit(1);
  }
  console.error('Installing PostgreSQL (apt-get install postgresql) for the PostgreSQL test run...');
  // No default cluster: nothing must be left running after the tests.
  mkdirSync('/etc/postgresql-common', { recursive: true });
  writeFileSync('/etc/postgresql-common/createcluster.conf', 'create_main_cluster = false\n');
  run('apt-get', ['update']);
  run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql']);
  if (!hasBinaries()) {
    console.error('apt-get installed postgresql but initdb is still missing');
    process.exit(1);
  }
}
