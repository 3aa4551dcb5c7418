import Dispatch
import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif
import CLinux

/// Tells when the mount table changes: `/proc/self/mountinfo` reports `POLLPRI` on every
/// mount, unmount and remount in the namespace, of every kind — a bind mount's unmount, an NFS
/// or CIFS share going away, a disk mounted below a library root — where inotify reports only
/// the last unmount of a disk's file system. One thread, blocked in `poll` while nothing
/// changes: no wake-ups when idle.
public final class MountWatcher: Service {
    private let descriptor: FileDescriptor
    /// The read end wakes the thread to stop; the write end is written once by `stop`.
    private let wakeRead: FileDescriptor
    private let wakeWrite: FileDescriptor
    private let onChange: Callback<MountTable, Void>
    private let logger: Logger
    private let table: Locked<MountTable>
    private let lifecycle = Locked((started: false, stopped: false))
    private let failed = Locked<String?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Opens `/proc/self/mountinfo` and reads the table; `start` begins watching.
    /// - Parameter onChange: called on the watcher's thread with the new table after each change.
    public init(logger: Logger, onChange: @escaping @Sendable (MountTable) -> Void) throws(SystemError) {
        descriptor = try FileDescriptor.open(MountTable.path, flags: O_RDONLY | O_CLOEXEC)
        var fds: [Int32] = [-1, -1]
        do throws(SystemError) {
            _ = try syscall("pipe") { pipe(&fds) }
            for fd in fds { _ = try syscall("fcntl") { fcntl(fd, F_SETFD, FD_CLOEXEC) } }
        } catch {
            for fd in fds where fd >= 0 { Glibc.close(fd) }
            descriptor.close()
            throw error
        }
        wakeRead = FileDescriptor(rawValue: fds[0])
        wakeWrite = FileDescriptor(rawValue: fds[1])
        self.logger = logger
        self.onChange = Callback(onChange)
        let first: MountTable
        do throws(SystemError) {
            first = try MountTable.read(from: descriptor)
        } catch {
            descriptor.close()
            wakeRead.close()
            wakeWrite.close()
            throw error
        }
        table = Locked(first)
    }

    /// The table as last read.
    public var current: MountTable { table.withLock { $0 } }

    /// Why the watcher stopped watching (a failed `poll` or read), if it did.
    public var failure: String? { failed.withLock { $0 } }

    /// Starts the thread (once).
    public func start() {
        let go = lifecycle.withLock { l -> Bool in
            guard !l.started, !l.stopped else { return false }
            l.started = true
            return true
        }
        guard go else { return }
        spawnThread("photod-mounts") { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops the thread and closes the descriptors; idempotent. Not from `onChange`.
    public func stop() {
        let (started, first) = lifecycle.withLock { l -> (Bool, Bool) in
            defer { l.stopped = true }
            return (l.started, !l.stopped)
        }
        guard first else { return }
        if started {
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWrite.rawValue, &byte, 1)
            finished.wait()
        }
        descriptor.close()
        wakeRead.close()
        wakeWrite.close()
    }

    private func run() {
        while true {
            let fired: Int32
            do {
                fired = try syscall("poll", context: MountTable.path.string) {
                    photo_poll_priority(descriptor.rawValue, wakeRead.rawValue, -1)
                }
            } catch {
                fail("cannot watch the mount table (\(error))")
                return
            }
            guard fired == 1 else { return }  // the stop byte
            do {
                let now = try MountTable.read(from: descriptor)
                table.withLock { $0 = now }
                logger.debug("the mount table changed (\(now.entries.count) mounts)")
                onChange(now)
            } catch {
                fail("cannot read the mount table (\(error))")
                return
            }
        }
    }

    private func fail(_ reason: String) {
        failed.withLock { $0 = reason }
        logger.error("\(reason): mounts are rechecked at intervals instead")
    }
}
