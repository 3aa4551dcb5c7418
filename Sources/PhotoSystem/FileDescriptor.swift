#if canImport(Glibc)
import Glibc
#endif
import CLinux
import PhotoModel

/// An open file descriptor (`int fd`). Not closed automatically: use `closeAfter` or own it
/// in one place and call `close()` once.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// `open(path, O_RDONLY | O_CLOEXEC | flags)`.
    public static func open(_ path: PathBytes, flags: CInt = 0) throws(SystemError) -> FileDescriptor {
        let fd = try path.withCString { p throws(SystemError) in
            try syscall("open", context: path.string) { Glibc.open(p, O_RDONLY | O_CLOEXEC | flags) }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// `openat(dir, name, O_RDONLY | O_CLOEXEC | flags)`.
    public static func open(_ name: [UInt8], in dir: FileDescriptor, flags: CInt = 0) throws(SystemError) -> FileDescriptor {
        let fd = try PathBytes.withCString(name) { p throws(SystemError) in
            try syscall("openat", context: String(decoding: name, as: UTF8.self)) {
                Glibc.openat(dir.rawValue, p, O_RDONLY | O_CLOEXEC | flags)
            }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Runs `body` and closes the descriptor afterwards, whatever happens.
    public func closeAfter<R, E: Error>(_ body: (FileDescriptor) throws(E) -> R) throws(E) -> R {
        defer { close() }
        return try body(self)
    }

    /// A whole (small) file: configuration, `/proc` entries. At most `limit` bytes.
    public static func readAll(_ path: PathBytes, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        let fd = try open(path)
        defer { fd.close() }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while out.count < limit {
            var n: Int?
            var failure: SystemError?
            buffer.withUnsafeMutableBytes { b in
                do throws(SystemError) { n = try fd.readSome(into: b) } catch { failure = error }
            }
            if let failure { throw failure }
            guard let n, n > 0 else { break }
            out += buffer[0..<min(n, limit - out.count)]
        }
        return out
    }

    /// `close(fd)`; errors are ignored (Linux always releases the descriptor).
    public func close() {
        _ = Glibc.close(rawValue)
    }

    /// `pread` into a buffer until it is full or the file ends; returns the bytes read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try syscall("pread") {
                Glibc.pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// `read` once into a buffer; returns the bytes read (0 at end of file), or `nil` on `EAGAIN`.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        while true {
            let n = Glibc.read(rawValue, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return nil }
            throw SystemError(call: "read", errno: e)
        }
    }

    /// `write` once; returns the bytes written, or `nil` on `EAGAIN`.
    public func writeSome(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        while true {
            let n = Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return n }
            let e = Glibc.errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return nil }
            if e == ENOTSOCK { return try writePlain(buffer) }
            throw SystemError(call: "send", errno: e)
        }
    }

    private func writePlain(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        let n = try syscall("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
        return n
    }

    /// `fstat(fd)`.
    public func stat() throws(SystemError) -> FileStat {
        var st = photo_stat()
        _ = try syscall("fstat") { photo_fstat(rawValue, &st) }
        return FileStat(st)
    }

    /// Hints that the file is read in small pieces (no readahead): cheaper cold reads of headers.
    public func adviseRandomAccess() { _ = photo_fadvise_random(rawValue) }

    /// Asks the kernel to start reading the first `head` bytes of the file at `path` and its
    /// last `tail` bytes into the page cache, and returns at once (`POSIX_FADV_WILLNEED`):
    /// reads issued ahead of the thread that will need them, so that a cold disk has many in
    /// flight. Only a hint: whatever fails here (the file gone, refused) fails again, and is
    /// reported, when the file is read. Returns 0 or the errno (for tests).
    @discardableResult
    public static func prefetch(_ path: PathBytes, size: Int64, head: Int, tail: Int) -> CInt {
        -path.withCString { photo_prefetch($0, size, Int64(head), Int64(tail)) }
    }
}

/// The fields of `struct stat` the indexer compares and stores.
public struct FileStat: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanoseconds: Int64
    public var ctimeNanoseconds: Int64
    public var mode: UInt32
    public var uid: UInt32
    public var gid: UInt32
    /// `st_nlink`: for a directory on most local file systems, 2 and one per subdirectory
    /// (`FileSystemInfo.countsSubdirectoryLinks`).
    public var linkCount: UInt64

    public init(device: UInt64 = 0, inode: UInt64, size: Int64, mtimeNanoseconds: Int64, ctimeNanoseconds: Int64 = 0,
                mode: UInt32 = UInt32(S_IFREG) | 0o644, uid: UInt32 = 0, gid: UInt32 = 0, linkCount: UInt64 = 1) {
        self.device = device
        self.inode = inode
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.ctimeNanoseconds = ctimeNanoseconds
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.linkCount = linkCount
    }

    init(_ st: photo_stat) {
        self.init(device: st.dev, inode: st.ino, size: st.size, mtimeNanoseconds: st.mtime_ns,
                  ctimeNanoseconds: st.ctime_ns, mode: st.mode, uid: st.uid, gid: st.gid, linkCount: st.nlink)
    }

    public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

    /// `fstatat(dir, name)`, not following symbolic links unless asked.
    public static func at(_ dir: FileDescriptor, _ name: [UInt8], followLinks: Bool = false) throws(SystemError) -> FileStat {
        var st = photo_stat()
        _ = try PathBytes.withCString(name) { p throws(SystemError) in
            try syscall("fstatat", context: String(decoding: name, as: UTF8.self)) {
                photo_fstatat(dir.rawValue, p, &st, followLinks ? 1 : 0)
            }
        }
        return FileStat(st)
    }

    /// `stat(path)` (following links unless told not to: then `lstat`).
    public static func of(_ path: PathBytes, followLinks: Bool = true) throws(SystemError) -> FileStat {
        var st = photo_stat()
        _ = try path.withCString { p throws(SystemError) in
            try syscall("stat", context: path.string) { photo_fstatat(AT_FDCWD, p, &st, followLinks ? 1 : 0) }
        }
        return FileStat(st)
    }

    /// Whether this process may open `name` below `dir` for reading now (`faccessat(R_OK,
    /// AT_EACCESS)`: its effective ids, groups and ACLs). A cheap check before reading again a
    /// file that was refused earlier.
    public static func isReadable(_ dir: FileDescriptor, _ name: [UInt8]) -> Bool {
        PathBytes.withCString(name) { Glibc.faccessat(dir.rawValue, $0, R_OK, AT_EACCESS) } == 0
    }

    /// Whether another process holds `name` below `dir` open for writing (a copy in progress):
    /// `nil` when that cannot be told (someone else's file, a network file system).
    public static func isOpenForWriting(_ dir: FileDescriptor, _ name: [UInt8]) -> Bool? {
        let r = PathBytes.withCString(name) { photo_is_open_for_writing(dir.rawValue, $0) }
        return r < 0 ? nil : r == 1
    }
}
