import { spawnSync } from 'node:child_process';

/**
 * Resets the page cache of `files` (the executables measured) to 4 KiB pages: written back, dropped,
 * then read again without readahead. RSS counts the pages of the executable a process maps, and the
 * kernel maps whole large folios at once: an executable just written (build:sea runs right before) or
 * read with a large readahead window (8 MiB on some disks) showed up to +30 MiB of RSS for the same
 * code. After this, every process maps only the pages it touches (plus the usual fault-around), so the
 * npm build, the single executable and bare node are measured alike.
 */
export function resetPageCache(files) {
  const script =
    'import os,sys\nfor p in sys.argv[1:]:\n fd=os.open(p,os.O_RDONLY);os.fsync(fd);os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED);os.posix_fadvise(fd,0,0,os.POSIX_FADV_RANDOM)\n for o in range(0,os.fstat(fd).st_size,4096):os.pread(fd,4096,o)\n os.close(fd)';
  const run = spawnSync('python3', ['-c', script, ...files], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0)
    console.warn('warning: could not reset the page cache of the executables; RSS figures may include whole large folios');
}
