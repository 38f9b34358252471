import { readFile, realpath } from 'node:fs/promises';

// A bind mount of a single file (Docker -v file:file, Kubernetes subPath) can sit on the same device
// as its directory, so st_dev alone misses it: the kernel's mount table names it exactly.

function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
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
