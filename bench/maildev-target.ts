// MailDev 3 in its own process, for the sink intake comparison (forked by bench/run.ts).
// Usage: node --import tsx bench/maildev-target.ts <dir holding node_modules/maildev> <mail dir>
// Sends {smtpPort} over IPC when listening; {cmd: 'stop'} -> {rss, peakRss}, then exits.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [installDir, mailDirectory] = process.argv.slice(2) as [string, string];
// MailDev 3 is ESM only (no require condition): its entry from its package.json.
const packageDir = path.join(installDir, 'node_modules', 'maildev');
const entry = path.join(packageDir, (JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as { main: string }).main);
const { MailDev } = (await import(pathToFileURL(entry).href)) as { MailDev: new (config: object) => any };
// File storage (each message written to the mail directory), as the relay stores what it captures.
const maildev = new MailDev({ smtp: 0, ip: '127.0.0.1', disableWeb: true, silent: true, mailDirectory });
await maildev.start();
process.send!({ smtpPort: maildev.getServers().smtp.getAddress().port });
process.on('disconnect', () => process.exit(1));
process.on('message', async () => {
  const status = await readFile('/proc/self/status', 'utf8').catch(() => '');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  const memory = { rss: kb('VmRSS') || process.memoryUsage().rss, peakRss: kb('VmHWM') || process.memoryUsage().rss };
  await maildev.stop();
  process.send!(memory, () => process.exit(0));
});
