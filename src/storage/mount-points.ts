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
 * The kernel's table of this process's mounts (/proc/self/mountinfo) and the real path of `path`;
 * undefined when either cannot be read (not Linux, no such path). Lines without the ` - ` separator
 * are not mounts.
 */
async function mountsAround(path: string): Promise<{ mounts: Mount[]; resolved: string } | undefined> {
  let table: string;
  let resolved: string;
  try {
    [table, resolved] = await Promise.all([readFile('/proc/self/mountinfo', 'utf8'), realpath(path)]);
  } catch {
    return undefined;
  }
  const mounts: Mount[] = [];
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    const point = fields[4];
    const dash = fields.indexOf('-', 6);
    if (point !== undefined && dash >= 0)
      mounts.push({
        mountPoint: unescapeMountPath(point),
        fsType: fields[dash + 1] ?? '?',
        source: unescapeMountPath(fields[dash + 2] ?? '?'),
      });
  }
  return { mounts, resolved };
}

/**
 * The mount `path` lives on: the longest mount point containing its real path (the last line of that
 * point when mounts are stacked, as the kernel's table lists the visible one last). Undefined when the
 * table cannot be read (not Linux).
 */
export async function mountOf(path: string): Promise<Mount | undefined> {
  const table = await mountsAround(path);
  if (!table) return undefined;
  const { mounts, resolved } = table;
  let found: Mount | undefined;
  for (const mount of mounts) {
    const { mountPoint } = mount;
    const inside = mountPoint === '/' || resolved === mountPoint || resolved.startsWith(`${mountPoint}/`);
    if (inside && (!found || mountPoint.length >= found.mountPoint.length)) found = mount;
  }
  return found;
}

/** Whether `path` is itself a mount point (a file bind-mounted onto its name). */
export async function findMountPoint(path: string): Promise<boolean> {
  const table = await mountsAround(path);
  return table?.mounts.some((mount) => mount.mountPoint === table.resolved) ?? false;
}
