#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem
import PhotoTesting

/// A datagram socket bound in a temporary directory, standing in for journald's
/// `/run/systemd/journal/socket`: tests point a `JournalSink` at `path` and read back what
/// it sent.
final class FakeJournal {
    let directory: TemporaryDirectory
    let path: String
    private(set) var fd: CInt

    init() throws {
        directory = try TemporaryDirectory("journal")
        path = directory("journal.sock").string
        fd = try FakeJournal.bind(path)
    }

    static func bind(_ path: String) throws -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(call: "socket", errno: errno) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw SystemError(call: "bind", errno: errno, context: path) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// The next datagram, or nil after `timeout` (10 s) without one.
    func receive(maxBytes: Int = 1 << 20) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { return nil }
        return Array(buffer[..<n])
    }

    /// The next datagram's fields, by name (a repeated name keeps all its values in order).
    func receiveFields(maxBytes: Int = 1 << 20) -> JournalEntry? {
        receive(maxBytes: maxBytes).flatMap(JournalEntry.init)
    }

    /// Stops listening and removes the socket file: journald is gone.
    func stop() {
        close(fd)
        fd = -1
        unlink(path)
    }

    /// Listens again at the same path: journald restarted.
    func restart() throws {
        fd = try FakeJournal.bind(path)
    }

    deinit {
        if fd >= 0 { close(fd) }
        directory.remove()
    }
}

/// One decoded datagram.
struct JournalEntry {
    let raw: [UInt8]
    let fields: [(name: String, value: [UInt8])]

    init?(_ raw: [UInt8]) {
        guard let fields = JournalFormat.decode(raw) else { return nil }
        self.raw = raw
        self.fields = fields
    }

    subscript(name: String) -> String? {
        fields.first { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    func bytes(_ name: String) -> [UInt8]? { fields.first { $0.name == name }?.value }

    var names: [String] { fields.map(\.name) }
}
