#!/usr/bin/python3
"""A FUSE file system that stops answering on command, as a hard-mounted NFS share does when its
server goes down: a read-only view of SOURCE at MOUNTPOINT whose every call (getattr first)
blocks while the file CONTROL exists, and goes on when it is removed.

    hang-fs.py SOURCE MOUNTPOINT CONTROL

Mounts and returns (the file system runs on in the background); `fusermount -u MOUNTPOINT`
ends it. Uses fusepy (Debian's python3-fusepy, which names the module `fusepy`; PyPI's names it
`fuse`), so run it with the system's /usr/bin/python3. The kernel's attribute and entry caches are kept
short, so that a look at the tree reaches this process soon after it stops answering.
"""
import errno
import os
import sys
import time

try:
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:
    from fuse import FUSE, FuseOSError, Operations


class Hanging(Operations):
    def __init__(self, source, control):
        self.source = source
        self.control = control

    def _wait(self):
        while os.path.exists(self.control):
            time.sleep(0.02)

    def _path(self, path):
        return os.path.join(self.source, path.lstrip("/"))

    def getattr(self, path, fh=None):
        self._wait()
        try:
            st = os.lstat(self._path(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        return {key: getattr(st, key) for key in
                ("st_mode", "st_nlink", "st_size", "st_uid", "st_gid", "st_atime", "st_mtime", "st_ctime")}

    def readdir(self, path, fh):
        self._wait()
        return [".", ".."] + os.listdir(self._path(path))

    def open(self, path, flags):
        self._wait()
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise FuseOSError(errno.EROFS)
        return os.open(self._path(path), os.O_RDONLY)

    def read(self, path, size, offset, fh):
        self._wait()
        return os.pread(fh, size, offset)

    def release(self, path, fh):
        os.close(fh)

    def statfs(self, path):
        self._wait()
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in
                ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                 "f_frsize", "f_namemax")}

    def access(self, path, mode):
        self._wait()
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)


if __name__ == "__main__":
    source, mountpoint, control = sys.argv[1:4]
    FUSE(Hanging(source, control), mountpoint, foreground=False, ro=True, nonempty=True,
         attr_timeout=0.1, entry_timeout=0.1, negative_timeout=0.1, fsname="hangfs")
