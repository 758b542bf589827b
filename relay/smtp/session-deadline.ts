// Every SMTP session is closed at its deadline (limits.smtpMaxSessionMs), whatever it is doing: a
// client trickling just under the idle time-out cannot hold a connection slot for ever. Shared by
// the sink and the submission listener.
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import type { Logger } from '../log.js';

/** Drops a session's connection without a word. */
export function dropConnection(server: SMTPServer, session: SMTPServerSession): void {
  for (const connection of server.connections) {
    if (connection.id === session.id) connection._socket.destroy();
  }
}

/** onConnect/onClose hooks that close each session of `server()` `maxSessionMs` after it opened. */
export function sessionDeadlines(server: () => SMTPServer, maxSessionMs: number, log: Logger, component: 'smtp' | 'submission') {
  const deadlines = new Map<string, NodeJS.Timeout>();
  return {
    start(session: SMTPServerSession): void {
      const timer = setTimeout(() => {
        log.info(component, 'session closed: too long', { session_id: session.id });
        dropConnection(server(), session);
      }, maxSessionMs);
      timer.unref();
      deadlines.set(session.id, timer);
    },
    end(session: SMTPServerSession): void {
      clearTimeout(deadlines.get(session.id));
      deadlines.delete(session.id);
    },
  };
}
