// Debian's spamd, started for real on a free port (installed by scripts/ensure-spamassassin.mjs):
// local tests only (no network lookups), no per-user configuration, one child; as root it runs
// its children as debian-spamd, the package's own user.
import { spawn, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';

export interface Spamd {
  address: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** PING -> PONG: spamd is up and answering the protocol. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.end('PING SPAMC/1.5\r\n\r\n'));
    socket.on('data', (d) => (answer += d));
    socket.on('end', () => resolve(answer.includes('PONG')));
    socket.on('error', () => resolve(false));
  });
}

export async function startSpamd(): Promise<Spamd> {
  const port = await freePort();
  const args = [`--listen=127.0.0.1:${port}`, '--local', '--nouser-config', '--max-children=1', '--syslog=stderr'];
  if (process.getuid?.() === 0) args.push('--username=debian-spamd');
  const child: ChildProcess = spawn('/usr/sbin/spamd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Under load spamd takes a while to compile its rules; it answers PONG once it can score.
  const deadline = Date.now() + 120_000;
  while (!(await ping(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`spamd did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    address: `127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
