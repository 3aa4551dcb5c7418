#!/usr/bin/python3
"""A FUSE file system that fails as a dying disk does, on command: the failing-disk test's
(scripts/failing-disk-test) disk. A read-write view of SOURCE at MOUNTPOINT, passed through
call for call, whose calls fail or stall while a rule says so.

    faulty-fs.py SOURCE MOUNTPOINT CONTROL      # runs in the foreground until unmounted
    faulty-fs.py --background SOURCE MOUNTPOINT CONTROL   # mounts, and returns (the Swift tests')

Commands on the Unix socket CONTROL, one a line, each answered with one line (`ok`, or an error):

    fail OP PATTERN ERRNO [after N]   calls OP on a path matching PATTERN fail with ERRNO
                                      (EIO, ENOSPC, ...); with `after N`, the first N matching
                                      calls from now still succeed (a checkpoint failing half way)
    slow OP PATTERN SECONDS           calls OP on a matching path take SECONDS longer
    heal                              every rule is dropped: the disk works again
    stats                             a line of JSON: {"calls": {"OP path": n}, "failed": {"OP path": n}}

OP is one of `open`, `read`, `write`, `fsync` (fsync and fdatasync of a file), `readdir`,
`getattr`, `create`, or `*`; PATTERN is an fnmatch pattern over the path inside the file system
(`/state/photod.db`, `/lib/bad/*`; `*` matches `/` too). `stats` counts the calls of `open`,
`create`, `fsync` and `readdir` (and every failed call), by path: the test uses it to see what
photod did (reopened its database after an fsync failed, read a directory again).

Nothing is cached in this process: every read and write goes to SOURCE at once, as the kernel
sends it (no write-back cache). A failed `write` or `fsync` changes nothing in SOURCE: the
kernel's page cache above a real dying disk may still hold the bytes; here the caller just sees
the error, which is all it may rely on.

Uses fusepy (Debian's python3-fusepy: module `fusepy`; PyPI's: `fuse`); run with /usr/bin/python3.
"""
import errno
import fnmatch
import json
import os
import socket
import sys
import threading
import time

try:
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:
    from fuse import FUSE, FuseOSError, Operations

COUNTED = {"open", "create", "fsync", "readdir"}


class Rules:
    def __init__(self):
        self.lock = threading.Lock()
        self.fail = []      # [op, pattern, errno, calls left to pass]
        self.slow = []      # (op, pattern, seconds)
        self.calls = {}
        self.failed = {}

    def apply(self, op, path):
        """Raises the error a rule gives `op` on `path`, after the delay one gives it."""
        delay, error = 0.0, None
        with self.lock:
            if op in COUNTED:
                key = "%s %s" % (op, path)
                self.calls[key] = self.calls.get(key, 0) + 1
            for o, pattern, seconds in self.slow:
                if o in (op, "*") and fnmatch.fnmatchcase(path, pattern):
                    delay = max(delay, seconds)
            for rule in self.fail:
                if rule[0] in (op, "*") and fnmatch.fnmatchcase(path, rule[1]):
                    if rule[3] > 0:
                        rule[3] -= 1
                        continue
                    error = rule[2]
                    key = "%s %s" % (op, path)
                    self.failed[key] = self.failed.get(key, 0) + 1
                    break
        if delay:
            time.sleep(delay)
        if error is not None:
            raise FuseOSError(error)

    def command(self, line):
        words = line.split()
        with self.lock:
            if words[:1] == ["fail"] and len(words) in (4, 6) and hasattr(errno, words[3]) and \
                    (len(words) == 4 or words[4] == "after"):
                self.fail.append([words[1], words[2], getattr(errno, words[3]), int(words[5]) if len(words) == 6 else 0])
                return "ok"
            if words[:1] == ["slow"] and len(words) == 4:
                self.slow.append((words[1], words[2], float(words[3])))
                return "ok"
            if words == ["heal"]:
                self.fail, self.slow = [], []
                return "ok"
            if words == ["stats"]:
                return json.dumps({"calls": self.calls, "failed": self.failed})
        return "unknown command: %s" % line.strip()


class Faulty(Operations):
    use_ns = True

    def __init__(self, source, rules):
        self.source = source
        self.rules = rules
        self.fh_path = {}

    def _p(self, path):
        return os.path.join(self.source, path.lstrip("/"))

    def _call(self, op, path, fn, *args):
        self.rules.apply(op, path)
        try:
            return fn(*args)
        except OSError as e:
            raise FuseOSError(e.errno)

    def getattr(self, path, fh=None):
        st = self._call("getattr", path, lambda: os.fstat(fh) if fh is not None else os.lstat(self._p(path)))
        return {key: getattr(st, key) for key in
                ("st_mode", "st_nlink", "st_size", "st_uid", "st_gid", "st_ino", "st_blocks")} | {
            "st_atime": st.st_atime_ns, "st_mtime": st.st_mtime_ns, "st_ctime": st.st_ctime_ns}

    def readdir(self, path, fh):
        return [".", ".."] + self._call("readdir", path, os.listdir, self._p(path))

    def readlink(self, path):
        return self._call("readlink", path, os.readlink, self._p(path))

    def access(self, path, mode):
        self.rules.apply("access", path)
        if not os.access(self._p(path), mode):
            raise FuseOSError(errno.EACCES)

    def statfs(self, path):
        st = self._call("statfs", path, os.statvfs, self._p(path))
        return {key: getattr(st, key) for key in
                ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                 "f_frsize", "f_namemax")}

    def chmod(self, path, mode):
        return self._call("chmod", path, os.chmod, self._p(path), mode)

    def chown(self, path, uid, gid):
        return self._call("chown", path, os.chown, self._p(path), uid, gid)

    def utimens(self, path, times=None):
        return self._call("utimens", path, lambda: os.utime(self._p(path), ns=times) if times else os.utime(self._p(path)))

    def mkdir(self, path, mode):
        return self._call("mkdir", path, os.mkdir, self._p(path), mode)

    def rmdir(self, path):
        return self._call("rmdir", path, os.rmdir, self._p(path))

    def unlink(self, path):
        return self._call("unlink", path, os.unlink, self._p(path))

    def symlink(self, target, source):
        return self._call("symlink", target, os.symlink, source, self._p(target))

    def link(self, target, source):
        return self._call("link", target, os.link, self._p(source), self._p(target))

    def rename(self, old, new):
        return self._call("rename", old, os.rename, self._p(old), self._p(new))

    def open(self, path, flags):
        fh = self._call("open", path, os.open, self._p(path), flags & ~(os.O_CREAT | os.O_EXCL))
        self.fh_path[fh] = path
        return fh

    def create(self, path, mode, fi=None):
        fh = self._call("create", path, os.open, self._p(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode)
        self.fh_path[fh] = path
        return fh

    def read(self, path, size, offset, fh):
        return self._call("read", path, os.pread, fh, size, offset)

    def write(self, path, data, offset, fh):
        return self._call("write", path, os.pwrite, fh, data, offset)

    def truncate(self, path, length, fh=None):
        return self._call("write", path, lambda: os.ftruncate(fh, length) if fh is not None else
                          os.truncate(self._p(path), length))

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        self.fh_path.pop(fh, None)
        os.close(fh)

    def fsync(self, path, datasync, fh):
        return self._call("fsync", path, os.fsync, fh)

    def opendir(self, path):
        return 0

    def releasedir(self, path, fh):
        return 0

    def fsyncdir(self, path, datasync, fh):
        self.rules.apply("fsyncdir", path)


def control(rules, path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(4)

    def serve():
        while True:
            conn, _ = server.accept()
            with conn, conn.makefile("rw") as f:
                for line in f:
                    f.write(rules.command(line) + "\n")
                    f.flush()

    threading.Thread(target=serve, daemon=True).start()


if __name__ == "__main__":
    args = sys.argv[1:]
    background = args[:1] == ["--background"]
    source, mountpoint, control_path = args[1:4] if background else args[:3]
    control_path = os.path.abspath(control_path)
    rules = Rules()
    if background:
        # FUSE forks into the background once mounted: the control socket's thread must be
        # started in the process that stays, so it is started in `init`, after the fork.
        fs = Faulty(os.path.abspath(source), rules)
        fs.init = lambda path: control(rules, control_path)
    else:
        control(rules, control_path)
        fs = Faulty(os.path.abspath(source), rules)
    # Attributes and entries cached briefly (every change goes through this mount); no
    # write-back cache, so each write and fsync reaches the rules.
    FUSE(fs, mountpoint, foreground=not background, nothreads=False, fsname="faultyfs",
         attr_timeout=0.1, entry_timeout=0.1, negative_timeout=0.1)
