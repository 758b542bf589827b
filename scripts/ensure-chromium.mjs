// pretest: the browser tests drive Debian's chromium. A fresh machine has none, so install it when
// we are root (CI is); otherwise say what to do. Never skip: a missing browser fails the run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.RAVEN_CHROMIUM ?? '/usr/bin/chromium';

if (!existsSync(CHROMIUM)) {
  if (process.getuid?.() !== 0) {
    console.error(`${CHROMIUM} is missing: install Debian's chromium (sudo apt-get install -y chromium) or set RAVEN_CHROMIUM.`);
    process.exit(1);
  }
  console.error(`${CHROMIUM} is missing: installing Debian's chromium with apt-get.`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium', 'fonts-dejavu-core'], { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (!existsSync(CHROMIUM)) {
    console.error(`apt-get finished but ${CHROMIUM} is still missing.`);
    process.exit(1);
  }
}
