import { constants } from 'node:fs';
import { type FileHandle, lstat, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

// Files the tool reads for what they hold, found in a directory that other users may be able to
// write: the agent's IPC auth token and certificate, beside datadog.yaml, which is where the identity
// file is too (docs/protocol.md §4b and docs/protocol.md §5). Whoever may write there can plant them:
// a symbolic link to a file only root may read (whose content would be sent as the bearer token), a
// certificate of their own (TLS would then trust their listener), a FIFO (a read that never ends). So
// such a file is read only when
// - it is a regular file (opened O_NONBLOCK: a FIFO never blocks the open) of at most `maxBytes`;
// - in a directory that users other than its owner may write (a group or other write bit, sticky or
//   not): the name (the link itself, when it is one) and the file read both belong to root, the
//   running user or the directory's owner, and the name still leads to that very file after the open
//   (a link swapped in for the open and out again is seen). A stranger's file or link there may have
//   been planted.
// In a directory only its owner may write, no stranger can have put anything there (docs/security.md §1).

type PlantableRead = { state: 'ok'; content: Buffer } | { state: 'missing' } | { state: 'refused'; why: string };

export async function readUnlessPlanted(path: string, maxBytes: number): Promise<PlantableRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { state: 'missing' } : { state: 'refused', why: `${path} cannot be read (${code})` };
  }
  try {
    const file = await handle.stat();
    if (!file.isFile()) return { state: 'refused', why: `${path} is not a regular file` };
    const dir = await stat(dirname(path));
    if (dir.mode & 0o022) {
      const where = `in ${dirname(path)}, which other users may write, so it may have been planted`;
      const trusted = new Set([0, process.geteuid?.() ?? 0, dir.uid]);
      const name = await lstat(path).catch(() => undefined);
      if (name?.isSymbolicLink() && !trusted.has(name.uid))
        return { state: 'refused', why: `${path} is a symbolic link of uid ${name.uid} ${where}` };
      if (!trusted.has(file.uid)) return { state: 'refused', why: `${path} belongs to uid ${file.uid} ${where}` };
      const now = await stat(path).catch(() => undefined);
      if (now?.dev !== file.dev || now.ino !== file.ino) return { state: 'refused', why: `${path} changed while it was read` };
    }
    if (file.size > maxBytes) return { state: 'refused', why: `${path} is larger than ${maxBytes} bytes` };
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) return { state: 'refused', why: `${path} is larger than ${maxBytes} bytes` };
    return { state: 'ok', content: buffer.subarray(0, bytesRead) };
  } finally {
    await handle.close();
  }
}
