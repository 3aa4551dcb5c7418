#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// The memory one catalog column lives in: a heap allocation of its own (a small snapshot made
/// in memory), or a read-only shared mapping of a file in the catalog's directory (the
/// library's snapshot: its pages are the kernel's page cache, not this process's memory).
final class ColumnMemory: @unchecked Sendable {
    let base: UnsafeRawPointer?
    let bytes: Int
    private let isMapped: Bool

    /// A copy of `array` in memory of its own.
    init<T: BitwiseCopyable>(copying array: [T]) {
        bytes = array.count * MemoryLayout<T>.stride
        isMapped = false
        guard bytes > 0 else {
            base = nil
            return
        }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: array.count * MemoryLayout<T>.stride, alignment: 16)
        array.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        base = UnsafeRawPointer(memory)
    }

    /// The first `bytes` bytes of the file `fd` names, mapped read-only.
    init(mapping fd: CInt, bytes: Int, path: String) throws(SystemError) {
        self.bytes = bytes
        isMapped = true
        guard bytes > 0 else {
            base = nil
            return
        }
        let p = Glibc.mmap(nil, bytes, PROT_READ, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else { throw SystemError(call: "mmap", errno: errno, context: path) }
        base = UnsafeRawPointer(p)
    }

    deinit {
        guard let base else { return }
        if isMapped {
            Glibc.munmap(UnsafeMutableRawPointer(mutating: base), bytes)
        } else {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }

    /// Lets go of the mapping's pages (they stay in the page cache, and come back on the next
    /// touch without a read): after a fetch, the columns it scanned are not this process's
    /// resident memory any more.
    func release() {
        guard isMapped, let base, bytes > 0 else { return }
        _ = Glibc.madvise(UnsafeMutableRawPointer(mutating: base), bytes, MADV_DONTNEED)
    }
}

/// A column of plain values: read-only, indexable, iterable, in memory or mapped.
struct CatalogColumn<Element: BitwiseCopyable>: RandomAccessCollection, @unchecked Sendable {
    let memory: ColumnMemory?
    let buffer: UnsafeBufferPointer<Element>

    init() {
        memory = nil
        buffer = UnsafeBufferPointer(start: nil, count: 0)
    }

    init(_ array: [Element]) {
        let m = ColumnMemory(copying: array)
        memory = m
        buffer = UnsafeBufferPointer(start: m.base?.assumingMemoryBound(to: Element.self), count: array.count)
    }

    /// `count` values at the start of `memory`.
    init(memory: ColumnMemory, count: Int) {
        precondition(count * MemoryLayout<Element>.stride <= memory.bytes)
        self.memory = memory
        buffer = UnsafeBufferPointer(start: memory.base?.assumingMemoryBound(to: Element.self), count: count)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { buffer.count }
    subscript(i: Int) -> Element { buffer[i] }

    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R { try body(buffer) }
}

/// Appends plain values to a new file through a buffer (a column written as a snapshot is built).
final class ColumnFileWriter {
    let path: String
    private let fd: CInt
    private var buffer: [UInt8] = []

    init(path: String) throws(SystemError) {
        self.path = path
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError(call: "open", errno: errno, context: path) }
        buffer.reserveCapacity(1 << 16)
    }

    deinit { _ = Glibc.close(fd) }

    func append<T: BitwiseCopyable>(_ value: T) throws(SystemError) {
        withUnsafeBytes(of: value) { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { try flush() }
    }

    func append(bytes: some Collection<UInt8>) throws(SystemError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { try flush() }
    }

    func flush() throws(SystemError) {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "write", errno: errno, context: path)
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and makes the file durable.
    func finish() throws(SystemError) {
        try flush()
        guard Glibc.fsync(fd) == 0 else { throw SystemError(call: "fsync", errno: errno, context: path) }
    }
}

/// A file made by filling a writable mapping in place (a sort order computed straight into the
/// file: no copy of it in this process's memory), then synced.
enum MappedFileFill {
    static func fill<T: BitwiseCopyable>(_ path: String, count: Int, of: T.Type,
                                         _ body: (UnsafeMutableBufferPointer<T>) -> Void) throws(SystemError) {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError(call: "open", errno: errno, context: path) }
        defer { _ = Glibc.close(fd) }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<T>.stride)
        guard !overflow else { throw SystemError(call: "size", errno: EINVAL, context: path) }
        guard bytes > 0 else { return }
        // Blocks allocated now, not when a page of the mapping is first stored to: a full disk is
        // an error here instead of a SIGBUS in the middle of a sort.
        let rc = posix_fallocate(fd, 0, off_t(bytes))
        guard rc == 0 else { throw SystemError(call: "posix_fallocate", errno: rc, context: path) }
        let p = Glibc.mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let p, p != MAP_FAILED else { throw SystemError(call: "mmap", errno: errno, context: path) }
        defer { Glibc.munmap(p, bytes) }
        body(UnsafeMutableBufferPointer(start: p.assumingMemoryBound(to: T.self), count: count))
        guard Glibc.msync(p, bytes, MS_SYNC) == 0 else { throw SystemError(call: "msync", errno: errno, context: path) }
    }
}
