// A listener that cannot bind says which one and the setting that moves it: "address already in
// use" alone does not tell a person whether the HTTP or the SMTP port is taken.

export interface ListenerSetting {
  /** What listens: 'HTTP', 'SMTP'. */
  what: string;
  /** The flag and the environment variable that set its port. */
  flag: string;
  env: string;
  host: string;
  port: number;
}

/** The same error (its code kept, so callers still map EADDRINUSE), with a message naming the way out. */
export function explainListenError(error: unknown, listener: ListenerSetting): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${listener.host}:${listener.port}`;
  let message: string | undefined;
  if (code === 'EADDRINUSE') {
    message = `the ${listener.what} port ${where} is already in use (another relay?): choose another with ${listener.flag} N or ${listener.env} (0 picks a free port)`;
  } else if (code === 'EACCES') {
    message = `no permission to listen on the ${listener.what} port ${where} (ports under 1024 need privileges): choose another with ${listener.flag} N or ${listener.env}`;
  } else if (code === 'EADDRNOTAVAIL') {
    message = `${listener.host} is not an address of this machine (the ${listener.what} listener's host)`;
  }
  if (message === undefined) return error;
  return Object.assign(new Error(message, { cause: error }), { code });
}
