// A few refusals smtp-server writes itself, with its own wording and no enhanced status code (its
// enhanced codes are off: our replies carry their own). Where the contract words such a reply
// (CONTRACT section 9), the listener replaces it here, for one session's connection; every other
// reply passes through unchanged.
import type { SMTPServer, SMTPServerSession } from 'smtp-server';

/** The reply to write instead (code, then the text starting with its enhanced code), or undefined to keep it. */
export type LibraryReplyRewrite = (code: number, context: string | false | undefined, secure: boolean) => { code: number; text: string } | undefined;

/** Call from onConnect: the session's connection is already in server.connections then. */
export function rewriteLibraryReplies(server: SMTPServer, session: SMTPServerSession, rewrite: LibraryReplyRewrite): void {
  for (const connection of server.connections) {
    if (connection.session !== session) continue;
    const send = connection.send.bind(connection);
    connection.send = (code, data, context) => {
      const replaced = rewrite(code, context, connection.secure);
      // `false`: smtp-server adds no enhanced code of its own to the replacement.
      return replaced ? send(replaced.code, replaced.text, false) : send(code, data, context);
    };
  }
}
