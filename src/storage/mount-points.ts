import { readFile, realpath } from 'node:fs/promises';

// A bind mount of a single file (Docker -v file:file, Kubernetes subPath) can sit on the same device
// as its directory, so st_dev alone misses it: the kernel's mount table names it exactly.

function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/** One line of /proc/self/mountinfo, as far as an operator needs it. */
interface Mount {
  mountPoint: string;
  fsType: string;
  source: string;
}

/**
 * The mount `path` lives on: the longest mount point containing its real path (the last line of that
 * point when mounts are stacked, as the kernel's table lists the visible one last). Undefined when the
 * table cannot be read (not Linux).
 */
export async function mountOf(path: string): Promise<Mount | undefined> {
  let table: string;
  let resolved: string;
  try {
    [table, resolved] = await Promise.all([readFile('/proc/self/mountinfo', 'utf8'), realpath(path)]);
  } catch {
    return undefined;
  }
  let found: Mount | undefined;
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4];
    const dash = fields.indexOf('-', 6);
    if (point === undefined || dash < 0) continue;
    const mountPoint = unescapeMountPath(point);
    const inside = mountPoint === '/' || resolved === mountPoint || resolved.startsWith(`${mountPoint}/`);
    if (inside && (!found || mountPoint.length >= found.mountPoint.length)) found = { mountPoint, fsType: fields[dash + 1] ?? '?', source: unescapeMountPath(fields[dash + 2] ?? '?') };
  }
  return found;
}

export async function findMountPoint(path: string): Promise<boolean> {
  let table: string;
  let resolved: string;
  try {
    [table, resolved] = await Promise.all([readFile('/proc/self/mountinfo', 'utf8'), realpath(path)]);
  } catch {
    return false;
  }
  return table.split('\n').some((line) => {
    const mountPoint = line.split(' ')[4];
    return mountPoint !== undefined && unescapeMountPath(mountPoint) === resolved;
  });
}
