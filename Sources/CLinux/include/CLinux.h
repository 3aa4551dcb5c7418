#pragma once
/* What Glibc's Swift module hides (GNU extensions, macros, `stdout`). The public header
 * includes only <stdint.h> and <stddef.h> so this module cannot capture declarations that
 * belong to Glibc (../shared/SWIFT-LINUX.md, pitfall 1). */
#include <stdint.h>
#include <stddef.h>

/// The credentials of a Unix-socket peer (`struct ucred`, a GNU extension).
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} photo_ucred;

/// `accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)`; -1 and errno on failure.
int photo_accept_nonblocking(int fd);

/// `getsockopt(fd, SOL_SOCKET, SO_PEERCRED)`; 0 on success, -1 and errno on failure.
int photo_peer_credentials(int fd, photo_ucred *out);

/// The parts of `struct statfs` photod uses.
typedef struct {
    uint64_t fsid;        /* f_fsid, both words: stable across reboots, unlike st_dev */
    int64_t type;         /* f_type magic: NFS_SUPER_MAGIC, FUSE_SUPER_MAGIC, ... */
} photo_fsinfo;

/// `statfs(path)`; 0 on success, -1 and errno on failure.
int photo_statfs(const char *path, photo_fsinfo *out);

/// `fstatfs(fd)`; 0 on success, -1 and errno on failure.
int photo_fstatfs(int fd, photo_fsinfo *out);

/// The id of the mount `fd` lies on (`statx(fd, "", AT_EMPTY_PATH, STX_MNT_ID)`: the first
/// field of its line in /proc/self/mountinfo). 0 on success; -1 and errno on failure, ENOSYS
/// when the kernel does not report mount ids (before Linux 5.8).
int photo_mount_id(int fd, uint64_t *out);

/// A FAT volume's serial number (`FAT_IOCTL_GET_VOLUME_ID` on any descriptor of the file
/// system). 0 on success; -1 and errno (ENOTTY on other file systems).
int photo_fat_volume_id(int fd, uint32_t *out);

/// Waits up to `timeout_ms` (-1: for ever) for `POLLPRI` or `POLLERR` on `watched` (what
/// /proc/self/mountinfo reports on every change of the mount table) or `POLLIN` on `wake`.
/// Returns 1 when `watched` fired, 2 when only `wake` did, 0 on timeout, -1 and errno on failure.
int photo_poll_priority(int watched, int wake, int timeout_ms);

/// Line-buffers stdout (under systemd it is not a terminal and would be fully buffered).
void photo_stdout_line_buffered(void);
/// Fixes malloc's thresholds (see the definition): large blocks are mapped and unmapped, never
/// kept in the heap after they are freed. Returns 0 when a setting was refused.
int photo_malloc_return_large_blocks(void);

/// Returns the free memory of every malloc arena to the kernel (`malloc_trim(0)`); 1 when some
/// was returned.
int photo_malloc_trim(void);

/// Flushes stdout (referencing `stdout` from Swift 6 is a concurrency error).
void photo_stdout_flush(void);

/// `posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM)`: headers only, no readahead.
int photo_fadvise_random(int fd);

/// Starts reading the first `head` bytes of the file at `path` and, when it is larger, its last
/// `tail` bytes (past the head) into the page cache, without waiting for them
/// (`POSIX_FADV_WILLNEED`), and closes it. `size` is the caller's last measure of the file.
/// Opened as the reader opens it (no symbolic link, non-blocking). 0 or -errno.
int photo_prefetch(const char *path, int64_t size, int64_t head, int64_t tail);

/// The file-type bits of a `struct stat` and the fields the indexer compares.
typedef struct {
    uint64_t dev;
    uint64_t ino;
    int64_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
    uint64_t nlink;
} photo_stat;

/// `fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)`; 0 on success, -1 and errno on failure.
int photo_fstatat(int dirfd, const char *name, photo_stat *out, int follow);

/// `fstat(fd)`; 0 on success, -1 and errno on failure.
int photo_fstat(int fd, photo_stat *out);

/// `flock(fd, LOCK_EX | LOCK_NB)` (Swift sees `struct flock` under the same name); 0 or -1 and errno.
int photo_lock_exclusive_nonblocking(int fd);

/// `errno == EWOULDBLOCK`.
int photo_errno_would_block(int e);

/// `pthread_setname_np(pthread_self(), name)` (15 characters at most): names show in `top -H`,
/// `perf` and `/proc/PID/task/TID/comm`.
void photo_set_thread_name(const char *name);


/// Whether another process holds `name` (below `dirfd`) open for writing: 1 yes, 0 no, -1 when
/// it cannot be told (not our file without CAP_LEASE, a network file system, leases disabled).
/// Asks for a read lease (`F_SETLEASE`, `F_RDLCK`), which the kernel refuses with `EAGAIN`
/// while a writer has the file open, and drops it at once. A writer opening the file in that
/// instant breaks the lease with `SIGIO`, which the first call sets to be ignored (its default
/// action would end the process).
int photo_is_open_for_writing(int dirfd, const char *name);

/// Sets the calling thread's nice value (`setpriority(PRIO_PROCESS, gettid(), nice)`: on Linux
/// a thread's own). Raising it needs no privilege; lowering it back does. Returns 0 or -1.
int photo_set_thread_nice(int nice);

/// The calling thread's nice value (-20...19), or 100 when it cannot be read.
int photo_thread_nice(void);

/// `renameat2(olddirfd, oldname, newdirfd, newname, RENAME_NOREPLACE)`: fails with `EEXIST`
/// instead of replacing a file already at the new name. 0, or -1 and errno (`EINVAL` on file
/// systems that cannot promise it).
int photo_rename_noreplace(int olddirfd, const char *oldname, int newdirfd, const char *newname);

/// The processors the calling process may run on: its affinity mask (as `nproc` counts them; the
/// online processors when it cannot be read), at most what a cgroup v2 CPU quota allows
/// (`CPUQuota=`, `docker --cpus`), as Foundation's `activeProcessorCount` counted them.
int photo_processor_count(void);
