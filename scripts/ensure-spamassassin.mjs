// Before `npm test`: the spam check's tests start Debian's spamd for real. When it is missing and
// we are root (CI: a fresh Debian machine), this installs the spamassassin and spamd packages (no
// service is started: the tests start their own spamd on a free port). Without root it says what to do.
import { spawnSync } from 'node:child_process';

const hasSpamd = () => spawnSync('sh', ['-c', 'command -v spamd || test -x /usr/sbin/spamd'], { stdio: 'ignore' }).status === 0;

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with ${result.status ?? result.signal}`);
}

if (!hasSpamd()) {
  if (process.getuid?.() !== 0) {
    console.error('SpamAssassin (spamd) is not installed and this is not root: install it (apt-get install spamassassin spamd).');
    process.exit(1);
  }
  console.error('Installing SpamAssassin (apt-get install spamassassin spamd) for the spam check tests...');
  run('apt-get', ['update']);
  run('apt-get', ['install', '-y', '--no-install-recommends', 'spamassassin', 'spamd']);
  if (!hasSpamd()) {
    console.error('apt-get installed spamd but it is still missing');
    process.exit(1);
  }
}
