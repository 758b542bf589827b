// The TCP sockets this process holds a descriptor for whose local port is `port` (the server side
// of its connections, listeners excluded): how a test sees that a server it runs in-process let
// go of a connection, whatever state the kernel keeps the connection in afterwards. Linux only.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';

/** Socket inodes of the TCP connections (IPv4 and IPv6) bound locally to `port`, not listening; to `peerPort` at the other end if given. */
function connectionInodes(port: number, peerPort?: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const [localPort, remotePort] = [fields[1]!, fields[2]!].map((address) => parseInt(address.split(':')[1]!, 16));
      if (localPort === port && fields[3] !== LISTEN && (peerPort === undefined || remotePort === peerPort)) inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** How many descriptors of this process are server-side connections on `port` (from the client at `peerPort` only, if given). */
export function openServerSockets(port: number, peerPort?: number): number {
  const inodes = connectionInodes(port, peerPort);
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined && inodes.has(inode)) count++;
  }
  return count;
}

/** Waits (polling, up to timeoutMs) until the process holds at most `most` such descriptors. */
export async function waitForServerSockets(port: number, most: number, timeoutMs = 30_000, peerPort?: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = openServerSockets(port, peerPort);
    if (count <= most || Date.now() > deadline) return count;
    await new Promise((r) => setTimeout(r, 100));
  }
}
