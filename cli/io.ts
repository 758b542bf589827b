/** Reading bodies from files or stdin, with usage errors (exit 2) a person can act on. */
import { readFile } from 'node:fs/promises';
import { UsageError } from './errors.js';

export async function readStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/** The bytes of `path`, or of stdin for `-`. */
export async function readFileOrStdin(path: string, flag: string): Promise<Buffer> {
  if (path === '-') {
    if (process.stdin.isTTY) throw new UsageError(`${flag} -: stdin is a terminal; pipe the content in`);
    return readStdin();
  }
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
}

/** `--body-file F`, else stdin (which must not be a terminal: nobody would type a signed body). */
export async function readBody(bodyFile: string | undefined): Promise<Buffer> {
  if (bodyFile !== undefined) return readFileOrStdin(bodyFile, '--body-file');
  if (process.stdin.isTTY) throw new UsageError('no body: pass --body-file FILE or pipe the raw body on stdin', 'missing_option');
  return readStdin();
}
