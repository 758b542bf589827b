// The replies smtp-server writes in one turn of the event loop leave the socket in one write. A
// client that pipelines (RFC 2920) sends MAIL, every RCPT and DATA in one packet, and smtp-server
// answers each command as its handler calls back, each answer a socket write of its own: a system
// call and a loopback segment apiece, five for a message of three recipients. Corked from the
// first reply of a turn until the next tick, they go out as one writev, in the same order;
// nothing is held past the turn that wrote it.
import type { Socket } from 'node:net';
import type { SMTPServer, SMTPServerSession } from 'smtp-server';

/** Call from onConnect: the session's connection is already in server.connections then. */
export function coalesceReplies(server: SMTPServer, session: SMTPServerSession): void {
  for (const connection of server.connections) {
    if (connection.session !== session) continue;
    const send = connection.send.bind(connection);
    let corked: Socket | undefined;
    const flush = () => {
      const socket = corked;
      corked = undefined;
      socket?.uncork();
    };
    connection.send = (code: number, data?: string | string[] | null, context?: string | false) => {
      const socket: Socket = connection._socket;
      // 220 (the greeting, or ready to start TLS: the socket is handed to TLS next) and 421 (the
      // connection closes next) leave at once, after whatever was written before them.
      if (code === 220 || code === 421 || (corked !== undefined && corked !== socket)) flush();
      else if (corked === undefined) {
        corked = socket;
        socket.cork();
        process.nextTick(flush);
      }
      return send(code, data, context);
    };
  }
}
