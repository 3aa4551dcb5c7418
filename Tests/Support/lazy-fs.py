#!/usr/bin/python3
"""A FUSE file system that loses what was not made durable, as a disk does at a power cut (after
LazyFS, github.com/dsrhaslab/lazyfs): the power-cut test's (scripts/power-cut-test) disk.

    lazy-fs.py STATE MOUNTPOINT        # runs in the foreground until unmounted

STATE holds two trees: `live/`, what processes see (every write, create, rename, unlink and
truncate is done there at once, and reads come from it), and `disk/`, what would be on the
platters: `disk/tree.json` (the directory entries) and `disk/data/<id>` (each file's content).
Nothing reaches `disk/` but through these, the durability model:

- `fsync`/`fdatasync` of a file makes its content and size durable: the pages written since its
  last sync (4 KiB pages, tracked per inode, whatever name it has now) are copied to its
  `disk/data` file, which takes the live size.
- `fsync` of a directory makes its entries durable: the names it holds now, each to the file or
  directory it names (a create, a rename into it, an unlink or a rename out of it becomes
  durable there and only there; a rename from one directory to another needs both synced).
  A file whose name is durable but whose content never was is empty after a cut.
- Nothing else is durable: not `close`, not a rename over a synced file (ext4's
  `auto_da_alloc` heuristic is not assumed), not the size of a file whose data was not synced.
  No `sync_file_range` or O_SYNC reaches a FUSE file system's daemon as such: photod uses
  neither (SQLite does not either, with its default build options).

This is stricter than ext4 with data=ordered, where an fsync of any file commits every metadata
change made before it (the journal is one), and a new file's fsync commits its name: it is
POSIX's minimum, which SQLite and photod's AtomicFile are written against (both fsync the
directory after they create or rename a file that must survive).

A cut: `cut clean`, `cut torn SEED` or `cut meta SEED` on the control socket STATE/control
(answers `ok`). The file system then answers every call with EIO (the power is off; kill the
processes using it first) and writes `disk/tree.json`: for `clean` what was durable; for `torn`
first a random half of each file's unsynced pages is kept (a disk may have written any of them,
in any order); for `meta` the entries of a random half of the directories are kept as they are
now, and of each file's unsynced pages a random prefix in page order, the size with it — ext4's
periodic journal commit (data=ordered), which makes names and renames durable with whatever
data write-back had reached: with delayed allocation a new file may be empty, or cut short. Unmount it
(`fusermount -u`), and the next `lazy-fs.py STATE MOUNTPOINT` rebuilds `live/` from `disk/`:
the machine boots. `stats` on the socket answers a line of JSON (syncs, pages written, ...).

With LAZYFS_LIE=1 in its environment it is a disk that lies: a file's `fsync` makes nothing
durable (the power-cut test's control: a test that passes on it would prove nothing).

Uses fusepy (Debian's python3-fusepy: module `fusepy`; PyPI's: `fuse`); run with /usr/bin/python3.
"""
import errno
import json
import os
import random
import shutil
import socket
import stat
import sys
import threading

try:
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:
    from fuse import FUSE, FuseOSError, Operations

PAGE = 4096
LIE = os.environ.get("LAZYFS_LIE") == "1"


class Disk:
    """The durable state: directories by id, each a dict name -> [kind, id or link target, mode]."""

    def __init__(self, state):
        self.dir = os.path.join(state, "disk")
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data, exist_ok=True)
        path = os.path.join(self.dir, "tree.json")
        if os.path.exists(path):
            with open(path) as f:
                saved = json.load(f)
            self.root, self.dirs = saved["root"], saved["dirs"]
        else:
            self.root, self.dirs = "root", {"root": {}}

    def save(self):
        tmp = os.path.join(self.dir, "tree.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"root": self.root, "dirs": self.dirs}, f)
        os.rename(tmp, os.path.join(self.dir, "tree.json"))

    def data_path(self, ident):
        return os.path.join(self.data, str(ident))

    def boot(self, live):
        """Makes `live` what the disk holds, and renames every id to the inode it now has live."""
        if os.path.exists(live):
            shutil.rmtree(live)
        os.mkdir(live)
        new_dirs, new_data = {}, os.path.join(self.dir, "data.new")
        if os.path.exists(new_data):
            shutil.rmtree(new_data)
        os.mkdir(new_data)
        used = set()

        def walk(ident, path):
            out = {}
            for name, (kind, ref, mode) in self.dirs.get(ident, {}).items():
                p = os.path.join(path, name)
                if kind == "d":
                    os.mkdir(p, mode & 0o7777)
                    ino = str(os.lstat(p).st_ino)
                    out[name] = ["d", ino, mode]
                    new_dirs[ino] = walk(ref, p)
                elif kind == "l":
                    os.symlink(ref, p)
                    out[name] = ["l", ref, mode]
                else:
                    src = self.data_path(ref)
                    if os.path.exists(src):
                        shutil.copyfile(src, p)
                    else:
                        open(p, "wb").close()
                    os.chmod(p, mode & 0o7777)
                    ino = str(os.lstat(p).st_ino)
                    if ref not in used and os.path.exists(src):
                        os.rename(src, os.path.join(new_data, ino))
                    else:
                        shutil.copyfile(p, os.path.join(new_data, ino))
                    used.add(ref)
                    out[name] = ["f", ino, mode]
            return out

        root_ino = str(os.lstat(live).st_ino)
        new_dirs[root_ino] = walk(self.root, live)
        shutil.rmtree(self.data)
        os.rename(new_data, self.data)
        self.root, self.dirs = root_ino, new_dirs
        self.save()


class LazyFS(Operations):
    use_ns = True

    def __init__(self, state):
        self.state = state
        self.live = os.path.join(state, "live")
        self.disk = Disk(state)
        self.disk.boot(self.live)
        self.mutex = threading.RLock()
        self.dirty = {}     # inode -> set of page numbers written since its last fsync
        self.fh_ino = {}    # file handle -> inode
        self.down = False
        self.stats = {"fsync": 0, "fsyncdir": 0, "pagesWritten": 0, "pagesSynced": 0, "cuts": 0}

    # -- helpers

    def _p(self, path):
        return os.path.join(self.live, path.lstrip("/"))

    def _check(self):
        if self.down:
            raise FuseOSError(errno.EIO)

    def _ino(self, fh):
        ino = self.fh_ino.get(fh)
        if ino is None:
            ino = self.fh_ino[fh] = os.fstat(fh).st_ino
        return ino

    def _sync_file(self, fh):
        if LIE:
            return
        ino = self._ino(fh)
        pages = self.dirty.pop(ino, set())
        target = self.disk.data_path(ino)
        fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            for page in sorted(pages):
                os.pwrite(fd, os.pread(fh, PAGE, page * PAGE), page * PAGE)
            os.ftruncate(fd, os.fstat(fh).st_size)
        finally:
            os.close(fd)
        self.stats["fsync"] += 1
        self.stats["pagesSynced"] += len(pages)

    def _sync_dir(self, path):
        live = self._p(path)
        ident = str(os.lstat(live).st_ino)
        entries = {}
        for name in os.listdir(live):
            st = os.lstat(os.path.join(live, name))
            if stat.S_ISDIR(st.st_mode):
                entries[name] = ["d", str(st.st_ino), st.st_mode]
                self.disk.dirs.setdefault(str(st.st_ino), {})
            elif stat.S_ISLNK(st.st_mode):
                entries[name] = ["l", os.readlink(os.path.join(live, name)), st.st_mode]
            else:
                entries[name] = ["f", str(st.st_ino), st.st_mode]
        self.disk.dirs[ident] = entries
        self.stats["fsyncdir"] += 1

    def cut(self, mode, seed):
        with self.mutex:
            self.down = True
            self.stats["cuts"] += 1
            rng = random.Random(seed)
            if mode == "meta":
                for dp, _, _ in os.walk(self.live):
                    if rng.random() < 0.5:
                        self._sync_dir("/" + os.path.relpath(dp, self.live) if dp != self.live else "/")
            if mode in ("torn", "meta"):
                # A live file's pages by inode: find each dirty inode's live name (or skip: an
                # unlinked file's pages matter to no one after the cut).
                names = {}
                for dp, dns, fns in os.walk(self.live):
                    for n in fns:
                        p = os.path.join(dp, n)
                        names.setdefault(os.lstat(p).st_ino, p)
                for ino, pages in self.dirty.items():
                    if ino not in names or not pages:
                        continue
                    if mode == "torn":
                        kept = [p for p in sorted(pages) if rng.random() < 0.5]
                    else:
                        kept = sorted(pages)[:rng.randrange(len(pages) + 1)]
                    if not kept:
                        continue
                    src = os.open(names[ino], os.O_RDONLY)
                    dst = os.open(self.disk.data_path(ino), os.O_RDWR | os.O_CREAT, 0o600)
                    try:
                        for page in kept:
                            os.pwrite(dst, os.pread(src, PAGE, page * PAGE), page * PAGE)
                        if mode == "meta" and len(kept) == len(pages):
                            os.ftruncate(dst, os.fstat(src).st_size)
                    finally:
                        os.close(src)
                        os.close(dst)
            self.dirty.clear()
            self.disk.save()

    # -- file system calls

    def getattr(self, path, fh=None):
        self._check()
        try:
            st = os.fstat(fh) if fh is not None else os.lstat(self._p(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        return {key: getattr(st, key) for key in
                ("st_mode", "st_nlink", "st_size", "st_uid", "st_gid", "st_ino", "st_blocks")} | {
            "st_atime": st.st_atime_ns, "st_mtime": st.st_mtime_ns, "st_ctime": st.st_ctime_ns}

    def readdir(self, path, fh):
        self._check()
        return [".", ".."] + os.listdir(self._p(path))

    def readlink(self, path):
        self._check()
        return os.readlink(self._p(path))

    def access(self, path, mode):
        self._check()
        if not os.access(self._p(path), mode):
            raise FuseOSError(errno.EACCES)

    def statfs(self, path):
        self._check()
        st = os.statvfs(self._p(path))
        return {key: getattr(st, key) for key in
                ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
                 "f_frsize", "f_namemax")}

    def _call(self, fn, *args):
        self._check()
        try:
            return fn(*args)
        except OSError as e:
            raise FuseOSError(e.errno)

    def chmod(self, path, mode):
        with self.mutex:
            return self._call(os.chmod, self._p(path), mode)

    def chown(self, path, uid, gid):
        with self.mutex:
            return self._call(os.chown, self._p(path), uid, gid)

    def utimens(self, path, times=None):
        with self.mutex:
            return self._call(lambda: os.utime(self._p(path), ns=times) if times else os.utime(self._p(path)))

    def mkdir(self, path, mode):
        with self.mutex:
            return self._call(os.mkdir, self._p(path), mode)

    def rmdir(self, path):
        with self.mutex:
            return self._call(os.rmdir, self._p(path))

    def unlink(self, path):
        with self.mutex:
            return self._call(os.unlink, self._p(path))

    def symlink(self, target, source):
        with self.mutex:
            return self._call(os.symlink, source, self._p(target))

    def link(self, target, source):
        with self.mutex:
            return self._call(os.link, self._p(source), self._p(target))

    def rename(self, old, new):
        with self.mutex:
            return self._call(os.rename, self._p(old), self._p(new))

    def mknod(self, path, mode, dev):
        with self.mutex:
            return self._call(os.mknod, self._p(path), mode, dev)

    def open(self, path, flags):
        with self.mutex:
            fh = self._call(os.open, self._p(path), flags & ~(os.O_CREAT | os.O_EXCL))
            self.fh_ino[fh] = os.fstat(fh).st_ino
            if flags & os.O_TRUNC:
                self.dirty.setdefault(self.fh_ino[fh], set())
            return fh

    def create(self, path, mode, fi=None):
        with self.mutex:
            fh = self._call(os.open, self._p(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode)
            self.fh_ino[fh] = os.fstat(fh).st_ino
            self.dirty.setdefault(self.fh_ino[fh], set())
            return fh

    def read(self, path, size, offset, fh):
        self._check()
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        with self.mutex:
            self._check()
            n = os.pwrite(fh, data, offset)
            if n:
                self.dirty.setdefault(self._ino(fh), set()).update(range(offset // PAGE, (offset + n - 1) // PAGE + 1))
                self.stats["pagesWritten"] += (offset + n - 1) // PAGE + 1 - offset // PAGE
            return n

    def truncate(self, path, length, fh=None):
        with self.mutex:
            self._check()
            try:
                if fh is not None:
                    os.ftruncate(fh, length)
                    ino = self._ino(fh)
                else:
                    os.truncate(self._p(path), length)
                    ino = os.lstat(self._p(path)).st_ino
            except OSError as e:
                raise FuseOSError(e.errno)
            self.dirty.setdefault(ino, set())

    def flush(self, path, fh):
        self._check()

    def release(self, path, fh):
        with self.mutex:
            self.fh_ino.pop(fh, None)
            os.close(fh)

    def fsync(self, path, datasync, fh):
        with self.mutex:
            self._check()
            self._sync_file(fh)

    def opendir(self, path):
        self._check()
        return 0

    def releasedir(self, path, fh):
        return 0

    def fsyncdir(self, path, datasync, fh):
        with self.mutex:
            self._check()
            self._sync_dir(path)


def control(fs, path):
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
                    words = line.split()
                    if words[:1] == ["cut"] and len(words) > 1 and words[1] in ("clean", "torn", "meta"):
                        fs.cut(words[1], int(words[2]) if len(words) > 2 else 0)
                        f.write("ok\n")
                    elif words[:1] == ["stats"]:
                        with fs.mutex:
                            f.write(json.dumps(fs.stats) + "\n")
                    else:
                        f.write("unknown command\n")
                    f.flush()

    threading.Thread(target=serve, daemon=True).start()


if __name__ == "__main__":
    state, mountpoint = sys.argv[1:3]
    fs = LazyFS(state)
    control(fs, os.path.join(state, "control"))
    # No kernel write-back cache (every write reaches this process at once); attributes cached
    # briefly: every change goes through this mount, so the kernel's copies stay true.
    FUSE(fs, mountpoint, foreground=True, nothreads=False, fsname="lazyfs", default_permissions=True)
