import PhotoSystem

/// Random-access bytes of one file: what the metadata reader parses. Implementations serve
/// small reads at arbitrary offsets; the reader never asks for a whole file.
public protocol ByteSource {
    /// The file's size in bytes (as `fstat` reported it when the source was made).
    var size: Int64 { get }
    /// Up to `count` bytes at `offset` (fewer at end of file, empty past it). Never allocates
    /// more than `count` (callers cap `count`).
    mutating func read(at offset: Int64, count: Int) throws(MetadataError) -> [UInt8]
}

/// A file already in memory (tests, fixtures, benchmarks).
public struct MemorySource: ByteSource, Sendable {
    /// The file's bytes.
    public let bytes: [UInt8]

    /// Wraps bytes held in memory.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The number of bytes held.
    public var size: Int64 { Int64(bytes.count) }

    /// A copy of the requested range; the whole array itself (no copy) when the range covers it.
    public mutating func read(at offset: Int64, count: Int) throws(MetadataError) -> [UInt8] {
        guard offset >= 0, count > 0, offset < Int64(bytes.count) else { return [] }
        let start = Int(offset)
        let end = start + min(count, bytes.count - start)
        if start == 0, end == bytes.count { return bytes }
        return Array(bytes[start..<end])
    }
}

/// A file read with `pread`. The first `headBytes` are read once and later reads inside them
/// are served from memory, so parsing the headers of a typical photo costs one system call.
public struct FileSource: ByteSource {
    /// The descriptor read from; the caller owns and closes it.
    public let descriptor: FileDescriptor
    /// The file's size, from the caller's `fstat`.
    public let size: Int64
    private let headLimit: Int
    private var cachedHead: [UInt8]?
    /// Bytes read from the descriptor so far (tests use it to prove headers, not files, are read).
    public private(set) var bytesRead: Int64 = 0
    /// `pread` calls made so far.
    public private(set) var readCalls: Int = 0

    /// How much of a file is read at once when it is first asked for (the pipeline's prefetch
    /// asks the kernel for the same span ahead of the readers).
    public static let defaultHeadBytes = 65536

    /// A source over an open descriptor; `size` comes from the caller's `fstat`.
    public init(descriptor: FileDescriptor, size: Int64, headBytes: Int = defaultHeadBytes) {
        self.descriptor = descriptor
        self.size = max(0, size)
        self.headLimit = max(0, headBytes)
    }

    /// The first `headBytes` of the file (fewer for a smaller file), read once and cached.
    /// The pipeline hashes them for the content fingerprint.
    public mutating func head() throws(MetadataError) -> [UInt8] {
        if let cachedHead { return cachedHead }
        let h = try pread(at: 0, count: Int(min(Int64(headLimit), size)))
        cachedHead = h
        return h
    }

    /// Serves the range from the cached head when it lies inside it, else with one `pread`.
    public mutating func read(at offset: Int64, count: Int) throws(MetadataError) -> [UInt8] {
        guard offset >= 0, count > 0, offset < size else { return [] }
        let n = Int(min(Int64(count), size - offset))
        if offset + Int64(n) <= Int64(headLimit) {
            let h = try head()
            let start = Int(offset)
            if start + n <= h.count {
                if start == 0, n == h.count { return h }
                return Array(h[start..<(start + n)])
            }
            // The head came back short: the file ended there when it was read (it shrank since it
            // was measured). Go by that end, not by the size measured before.
            if h.count < Int(min(Int64(headLimit), size)) { return start < h.count ? Array(h[start...]) : [] }
        }
        return try pread(at: offset, count: n)
    }

    private mutating func pread(at offset: Int64, count: Int) throws(MetadataError) -> [UInt8] {
        guard count > 0 else { return [] }
        readCalls += 1
        var failure: SystemError?
        let fd = descriptor
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemError) {
                initialized = try fd.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw MetadataError(.unreadable, "cannot read the file: \(failure)") }
        bytesRead += Int64(bytes.count)
        return bytes
    }
}
