#include <malloc.h>
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CLinux.h"
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <string.h>
#include <linux/msdos_fs.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int photo_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

int photo_peer_credentials(int fd, photo_ucred *out) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    out->pid = cred.pid;
    out->uid = cred.uid;
    out->gid = cred.gid;
    return 0;
}

static void fill_fsinfo(const struct statfs *st, photo_fsinfo *out) {
    uint32_t words[2];
    memcpy(words, &st->f_fsid, sizeof(words));
    out->fsid = ((uint64_t)words[0] << 32) | (uint64_t)words[1];
    out->type = (int64_t)st->f_type;
}

int photo_statfs(const char *path, photo_fsinfo *out) {
    struct statfs st;
    if (statfs(path, &st) != 0) return -1;
    fill_fsinfo(&st, out);
    return 0;
}

int photo_fstatfs(int fd, photo_fsinfo *out) {
    struct statfs st;
    if (fstatfs(fd, &st) != 0) return -1;
    fill_fsinfo(&st, out);
    return 0;
}

#ifndef STX_MNT_ID
#define STX_MNT_ID 0x00001000U
#endif

int photo_mount_id(int fd, uint64_t *out) {
    struct statx stx;
    memset(&stx, 0, sizeof(stx));
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STX_MNT_ID, &stx) != 0) return -1;
    if (!(stx.stx_mask & STX_MNT_ID)) {
        errno = ENOSYS;
        return -1;
    }
    *out = (uint64_t)stx.stx_mnt_id;
    return 0;
}

int photo_fat_volume_id(int fd, uint32_t *out) {
    uint32_t id = 0;
    if (ioctl(fd, FAT_IOCTL_GET_VOLUME_ID, &id) != 0) return -1;
    *out = id;
    return 0;
}

int photo_poll_priority(int watched, int wake, int timeout_ms) {
    struct pollfd fds[2] = {{.fd = watched, .events = POLLPRI}, {.fd = wake, .events = POLLIN}};
    int n = poll(fds, wake >= 0 ? 2 : 1, timeout_ms);
    if (n < 0) return -1;
    if (n == 0) return 0;
    if (fds[0].revents & (POLLPRI | POLLERR)) return 1;
    if (fds[0].revents & POLLNVAL) {
        errno = EBADF;
        return -1;
    }
    return 2;
}

void photo_stdout_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

/* glibc raises its mmap threshold to the size of each mapped block that is freed (up to
 * 32 MB), so after the first large temporary array (a whole fetch result of a million assets, a
 * decoded image) the next ones come from the heap, and the heap keeps what they held after they are
 * freed: resident memory that only grows. A fixed threshold turns the adjustment off. (Fewer
 * arenas would save a few MB more, but cost the initial index 15-20 % in malloc contention.) */
int photo_malloc_return_large_blocks(void) {
    /* 1 MiB: blocks below it (a request's arrays, a page of JSON) reuse heap pages instead of
     * faulting fresh ones in at every request; a large fetch result's arrays (4-8 MB) are above. */
    int ok = mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
    ok &= mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    return ok;
}

void photo_stdout_flush(void) { fflush(stdout); }

int photo_fadvise_random(int fd) { return posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); }

int photo_prefetch(const char *path, int64_t size, int64_t head, int64_t tail) {
    if (size <= 0) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -errno;
    int rc = posix_fadvise(fd, 0, size < head ? size : head, POSIX_FADV_WILLNEED);
    if (rc == 0 && size > head && tail > 0) {
        int64_t start = size - tail > head ? size - tail : head;
        rc = posix_fadvise(fd, start, size - start, POSIX_FADV_WILLNEED);
    }
    close(fd);
    return -rc;
}

static void fill_stat(const struct stat *st, photo_stat *out) {
    out->dev = (uint64_t)st->st_dev;
    out->ino = (uint64_t)st->st_ino;
    out->size = (int64_t)st->st_size;
    out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
    out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    out->mode = (uint32_t)st->st_mode;
    out->uid = (uint32_t)st->st_uid;
    out->gid = (uint32_t)st->st_gid;
    out->nlink = (uint64_t)st->st_nlink;
}

int photo_fstatat(int dirfd, const char *name, photo_stat *out, int follow) {
    struct stat st;
    if (fstatat(dirfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0) return -1;
    fill_stat(&st, out);
    return 0;
}

int photo_fstat(int fd, photo_stat *out) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    fill_stat(&st, out);
    return 0;
}

#include <sys/file.h>
int photo_lock_exclusive_nonblocking(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }
int photo_errno_would_block(int e) { return e == EWOULDBLOCK || e == EAGAIN; }

#include <pthread.h>
void photo_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, 15);
    truncated[15] = 0;
    pthread_setname_np(pthread_self(), truncated);
}


#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static pthread_once_t sigio_once = PTHREAD_ONCE_INIT;

static void ignore_sigio(void) {
    struct sigaction current;
    if (sigaction(SIGIO, NULL, &current) == 0 && current.sa_handler == SIG_DFL) signal(SIGIO, SIG_IGN);
}

int photo_is_open_for_writing(int dirfd, const char *name) {
    pthread_once(&sigio_once, ignore_sigio);
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -1;
    int result;
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        fcntl(fd, F_SETLEASE, F_UNLCK);
        result = 0;
    } else {
        result = errno == EAGAIN ? 1 : -1;
    }
    close(fd);
    return result;
}

int photo_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

int photo_thread_nice(void) {
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    return (nice == -1 && errno != 0) ? 100 : nice;
}

int photo_rename_noreplace(int olddirfd, const char *oldname, int newdirfd, const char *newname) {
    return renameat2(olddirfd, oldname, newdirfd, newname, RENAME_NOREPLACE);
}

/// The CPUs a cgroup v2 quota allows this process (`cpu.max` of its cgroup and those above it,
/// rounded up), or 0 when none limits it.
static int cgroup_cpu_limit(void) {
    char line[4096];
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f) return 0;
    char path[4096] = "";
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(path, sizeof path, "%s", line + 3);
            path[strcspn(path, "\n")] = 0;
            break;
        }
    }
    fclose(f);
    if (!path[0]) return 0;
    int limit = 0;
    for (;;) {
        char file[4200];
        snprintf(file, sizeof file, "/sys/fs/cgroup%s/cpu.max", strcmp(path, "/") == 0 ? "" : path);
        FILE *m = fopen(file, "re");
        if (m) {
            char quota[64] = "";
            long long period = 0;
            if (fscanf(m, "%63s %lld", quota, &period) == 2 && strcmp(quota, "max") != 0 && period > 0) {
                long long q = atoll(quota);
                int cpus = (int)((q + period - 1) / period);
                if (cpus < 1) cpus = 1;
                if (limit == 0 || cpus < limit) limit = cpus;
            }
            fclose(m);
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash == path) break;
        *slash = 0;
    }
    return limit;
}

int photo_processor_count(void) {
    int n = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int)online : 1;
    }
    int limit = cgroup_cpu_limit();
    return limit > 0 && limit < n ? limit : n;
}

int photo_malloc_trim(void) { return malloc_trim(0); }
