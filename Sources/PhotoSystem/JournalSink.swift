#if canImport(Glibc)
import Glibc
#endif

/// journald's native protocol (systemd.journal-fields(7), "Native Journal Protocol" in
/// systemd's docs): one datagram per record, one field per line. Pure: no I/O.
public enum JournalFormat {
    /// The longest field name journald accepts.
    public static let maxFieldNameBytes = 64

    /// Metadata keys whose field name is not simply `PHOTOD_` + the key: one field for the
    /// path, however the call site spells it.
    static let aliases: [String: String] = ["asset.path": "PHOTOD_PATH"]

    /// The journal field for a metadata key: `asset.id` → `PHOTOD_ASSET_ID`, `batch` →
    /// `PHOTOD_BATCH`, `asset.path` → `PHOTOD_PATH`. Letters are upper-cased; anything else
    /// outside `[A-Z0-9]` becomes one `_`; the `PHOTOD_` prefix keeps it from starting with `_`
    /// (journald's trusted fields) or a digit; it is cut to 64 bytes.
    public static func fieldName(forMetadataKey key: String) -> String {
        if let alias = aliases[key] { return alias }
        return "PHOTOD_" + sanitized(key, maxBytes: maxFieldNameBytes - 7)
    }

    /// `text` as the body of a field name: `[A-Z0-9_]` only, no leading, trailing or doubled
    /// `_`, at most `maxBytes`; `FIELD` when nothing is left.
    static func sanitized(_ text: String, maxBytes: Int) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(byte)
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                out.append(byte - 32)
            default:
                // A multi-byte character is one `_`, not one per byte.
                if byte & 0xC0 == 0x80 { continue }
                if let last = out.last, last != UInt8(ascii: "_") { out.append(UInt8(ascii: "_")) }
            }
        }
        if out.count > maxBytes { out.removeLast(out.count - maxBytes) }
        while out.last == UInt8(ascii: "_") { out.removeLast() }
        return out.isEmpty ? "FIELD" : String(decoding: out, as: UTF8.self)
    }

    /// Whether journald accepts `name` from a client: 1 to 64 bytes of `[A-Z0-9_]`, not
    /// starting with a digit or `_`.
    public static func isValidFieldName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maxFieldNameBytes,
              first != UInt8(ascii: "_"), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
        else { return false }
        return bytes.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    /// Appends one field: `NAME=value\n`, or, when the value holds a newline, the binary form
    /// `NAME\n` + its length as 64-bit little-endian + the value + `\n`.
    public static func append(_ name: String, _ value: some Collection<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        if value.contains(UInt8(ascii: "\n")) {
            out.append(UInt8(ascii: "\n"))
            withUnsafeBytes(of: UInt64(value.count).littleEndian) { out.append(contentsOf: $0) }
        } else {
            out.append(UInt8(ascii: "="))
        }
        out.append(contentsOf: value)
        out.append(UInt8(ascii: "\n"))
    }

    /// The datagram for `record`, at most `maxBytes` long: when it would be longer, `MESSAGE`
    /// is cut (at a character boundary, marked with `…`) and `PHOTOD_MESSAGE_BYTES` gives its
    /// full length. `nil` when even an empty message does not fit.
    public static func encode(_ record: LogRecord, identifier: String, maxBytes: Int = .max) -> [UInt8]? {
        var fields: [UInt8] = []
        fields.reserveCapacity(256 + record.message.utf8.count)
        append("PRIORITY", String(record.level.rawValue).utf8, to: &fields)
        append("SYSLOG_IDENTIFIER", identifier.utf8, to: &fields)
        append("PHOTOD_FACILITY", record.facility.utf8, to: &fields)
        if !record.file.isEmpty {
            append("CODE_FILE", record.file.utf8, to: &fields)
            append("CODE_LINE", String(record.line).utf8, to: &fields)
        }
        if !record.function.isEmpty { append("CODE_FUNC", record.function.utf8, to: &fields) }
        for (key, value) in record.metadata { append(fieldName(forMetadataKey: key), value.utf8, to: &fields) }

        let message = Array(record.message.utf8)
        var datagram = fields
        append("MESSAGE", message, to: &datagram)
        if datagram.count <= maxBytes { return datagram }

        // Too long: cut the message to what is left once the other fields, the marker and the
        // length field are in (binary form assumed: the longer of the two).
        let marker = Array("…".utf8)
        var lengthField: [UInt8] = []
        append("PHOTOD_MESSAGE_BYTES", String(message.count).utf8, to: &lengthField)
        let overhead = "MESSAGE\n".utf8.count + 8 + 1 + marker.count
        let room = maxBytes - fields.count - lengthField.count - overhead
        guard room >= 0 else { return nil }
        var cut = min(room, message.count)
        while cut > 0 && cut < message.count && message[cut] & 0xC0 == 0x80 { cut -= 1 }  // not inside a character
        datagram = fields + lengthField
        append("MESSAGE", message[..<cut] + marker, to: &datagram)
        return datagram
    }

    /// The fields of a datagram in order (`nil` if it is malformed): the inverse of `append`,
    /// for tests and tools.
    public static func decode(_ datagram: [UInt8]) -> [(name: String, value: [UInt8])]? {
        var fields: [(name: String, value: [UInt8])] = []
        var i = 0
        while i < datagram.count {
            guard let end = datagram[i...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else {
                return nil
            }
            let name = String(decoding: datagram[i..<end], as: UTF8.self)
            if datagram[end] == UInt8(ascii: "=") {
                let valueEnd = datagram[(end + 1)...].firstIndex(of: UInt8(ascii: "\n")) ?? datagram.count
                fields.append((name, Array(datagram[(end + 1)..<valueEnd])))
                i = valueEnd + 1
            } else {
                guard end + 9 <= datagram.count else { return nil }
                var length: UInt64 = 0
                for k in 0..<8 { length |= UInt64(datagram[end + 1 + k]) << (8 * UInt64(k)) }
                let start = end + 9
                guard length <= UInt64(datagram.count - start), start + Int(length) < datagram.count,
                      datagram[start + Int(length)] == UInt8(ascii: "\n")
                else { return nil }
                fields.append((name, Array(datagram[start..<(start + Int(length))])))
                i = start + Int(length) + 1
            }
        }
        return fields
    }
}

/// Records to journald over its native protocol (`/run/systemd/journal/socket`, a datagram
/// socket), with every metadata pair as a field of its own (`journalctl PHOTOD_PATH=…`).
/// Written in Swift with `sendto`, not `sd_journal_send`: that is variadic, so Swift cannot
/// call it, and it fails silently (../shared/SWIFT-LINUX.md).
///
/// One socket per sink, opened once and kept; one per process in practice. A record that
/// cannot be sent (journald stopped, its socket gone) goes to `fallback` instead, with one
/// warning when that starts and one notice when the journal takes records again.
public final class JournalSink: LogSink {
    /// Records larger than this have their message cut. Well under Linux's default send buffer
    /// (`net.core.wmem_default`, 208 KiB), which bounds a Unix datagram.
    public static let defaultMaxDatagramBytes = 128 * 1024

    /// The journal's socket.
    public let path: String
    /// `SYSLOG_IDENTIFIER=`.
    public let identifier: String
    /// The longest datagram sent.
    public let maxDatagramBytes: Int
    let fallback: any LogSink
    private let socket: FileDescriptor
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// How many records went to `fallback` since the journal last took one.
    private let failures = Locked<Int>(0)

    /// Opens a datagram socket for `path` (nothing is sent yet). Throws when the path does
    /// not fit a socket address or no socket can be made. `sendBufferBytes` asks for a send
    /// buffer (`SO_SNDBUF`), which bounds a datagram; the kernel caps it at net.core.wmem_max.
    public init(path: String, identifier: String = "photod", fallback: any LogSink = StderrSink(),
                maxDatagramBytes: Int = JournalSink.defaultMaxDatagramBytes, sendBufferBytes: Int = 8 << 20) throws(SystemError) {
        self.path = path
        self.identifier = identifier
        self.fallback = fallback
        self.maxDatagramBytes = maxDatagramBytes
        let pathBytes = Array(path.utf8)
        guard !pathBytes.isEmpty, pathBytes.count <= UnixSocket.maxPathBytes, !pathBytes.contains(0) else {
            throw SystemError(call: "socket", errno: ENAMETOOLONG, context: path)
        }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: pathBytes) }  // zeroed: ends with NUL
        address = addr
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + 1)
        let fd = try syscall("socket", context: path) {
            Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        // A bigger send buffer lets bigger records through; a failure only means the default stays.
        var size = CInt(clamping: sendBufferBytes)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        socket = FileDescriptor(rawValue: fd)
    }

    deinit { socket.close() }

    public func emit(_ record: LogRecord) {
        var limit = maxDatagramBytes
        while true {
            guard let datagram = JournalFormat.encode(record, identifier: identifier, maxBytes: limit) else {
                fallback.emit(record)  // its other fields alone are too big: never lose it
                return
            }
            switch send(datagram) {
            case 0:
                let missed = failures.withLock { count in defer { count = 0 }; return count }
                if missed > 0 {
                    _ = send(JournalFormat.encode(
                        LogRecord(level: .notice, facility: record.facility,
                                  message: "the journal at '\(path)' takes records again; \(missed) went to stderr meanwhile"),
                        identifier: identifier) ?? [])
                }
                return
            case let e where (e == EMSGSIZE || e == ENOBUFS || e == ENOMEM) && limit > 1024:
                // Over the kernel's limit (the send buffer), or too big to allocate in one
                // piece: cut harder.
                limit = min(limit, datagram.count) / 2
            case let e:
                let first = failures.withLock { count in defer { count += 1 }; return count == 0 }
                if first {
                    fallback.emit(LogRecord(level: .warning, facility: record.facility,
                                            message: "cannot send to the journal at '\(path)': "
                                                + SystemError(call: "sendto", errno: e).message + "; logging to stderr",
                                            file: #fileID, line: #line, function: #function))
                }
                fallback.emit(record)
                return
            }
        }
    }

    /// `sendto` one datagram; 0 or the `errno`. Blocks while journald's queue is full, as
    /// sd_journal_send does.
    private func send(_ datagram: [UInt8]) -> Int32 {
        var addr = address
        while true {
            let rc = withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    datagram.withUnsafeBytes { b in
                        Glibc.sendto(socket.rawValue, b.baseAddress, b.count, Int32(MSG_NOSIGNAL), sa, addressLength)
                    }
                }
            }
            if rc >= 0 { return 0 }
            let e = errno
            if e != EINTR { return e }
        }
    }
}
