import Glibc
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// The parts every subcommand shares: exit codes, output, option parsing, calls to photod.

/// photoctl's exit statuses (sysexits.h's for usage, an unreachable service and a refused
/// permission).
enum Exit: Int32 {
    case ok = 0, failure = 1, usage = 64, unavailable = 69, noPermission = 77
}

/// Why a subcommand stopped: the exit status and the line for stderr (after `photoctl: `).
struct Failure: Error {
    var code: Exit
    var message: String
    /// The daemon's error, when the failure is one.
    var rpc: RPCError?

    init(code: Exit, message: String, rpc: RPCError? = nil) {
        self.code = code
        self.message = message
        self.rpc = rpc
    }
}

/// Writes all of `bytes` to `fd` with write(2), retrying an interrupted or partial write (and
/// waiting out a non-blocking descriptor that is full); returns the errno of a failed write.
@discardableResult
func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
    bytes.withUnsafeBytes { raw -> Int32? in
        var off = 0
        while off < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
            if n >= 0 {
                off += n
                continue
            }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK {
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
                continue
            }
            return e
        }
        return nil
    }
}

/// photoctl's standard output: every line of data goes through here. Lines collect in a
/// buffer written with write(2) when it fills, at `flush()` (a watch flushes each change set,
/// so that a pipe sees it at once) and at `finish()`, photoctl's last act. Output that did not
/// arrive is never a success, as in coreutils (`close_stdout`): a write that fails — a full
/// disk, `/dev/full`, a closed pipe when SIGPIPE is ignored — ends photoctl at once with status
/// 1 and `write error: …` on stderr, and `finish()` reports one in the final flush or close.
final class StandardOutput: Sendable {
    /// Bytes held before they are written.
    static let bufferLimit = 64 << 10
    private let buffer = Locked<[UInt8]>([])

    /// Adds `text`; writes the buffer when it is full.
    func write(_ text: String) {
        let full = buffer.withLock { b -> Bool in
            b.append(contentsOf: text.utf8)
            return b.count >= Self.bufferLimit
        }
        if full { flush() }
    }

    /// Writes what is buffered now.
    func flush() {
        if let problem = writeBuffered() { fail(problem) }
    }

    /// The final flush, then close(2), whose error counts too (a file system that reports a
    /// failed write only then); the message of the first failure, or nil when all arrived.
    func finish() -> String? {
        if let problem = writeBuffered() { return problem }
        // EBADF: stdout was closed from the start and nothing was written to it.
        if Glibc.close(1) != 0, errno != EBADF { return Self.message(errno) }
        return nil
    }

    private func writeBuffered() -> String? {
        let bytes = buffer.withLock { b -> [UInt8] in
            defer { b = [] }
            return b
        }
        return bytes.isEmpty ? nil : writeAll(bytes, to: 1).map(Self.message)
    }

    private static func message(_ e: Int32) -> String { "write error: \(String(cString: strerror(e)))" }

    private func fail(_ problem: String) -> Never {
        err("photoctl: \(problem)")
        exit(Exit.failure.rawValue)
    }
}

let standardOutput = StandardOutput()

/// A line of data on stdout.
func out(_ line: String) { standardOutput.write(line + "\n") }
/// A line of diagnostics on stderr, written at once (a failure to write it cannot be reported).
func err(_ line: String) { writeAll(Array((line + "\n").utf8), to: 2) }

/// Parsed options of one subcommand.
struct Arguments {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positional: [String] = []

    /// Parses `args`: `allowedFlags` take no value, `allowedValues` take one (`--x V` or
    /// `--x=V`); anything else starting with `-` is a usage error. After `--` every argument is
    /// positional (a title that starts with a dash).
    init(_ args: [String], flags allowedFlags: Set<String>, values allowedValues: Set<String>, command: String) throws(Failure) {
        var i = 0
        var optionsEnded = false
        while i < args.count {
            var a = args[i]
            if optionsEnded {
                positional.append(a)
                i += 1
                continue
            }
            if a == "--" {
                optionsEnded = true
                i += 1
                continue
            }
            var inline: String?
            if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
                inline = String(a[a.index(after: eq)...])
                a = String(a[..<eq])
            }
            if allowedFlags.contains(a), inline == nil {
                flags.insert(a)
            } else if allowedValues.contains(a) {
                if let inline {
                    values[a] = inline
                } else {
                    i += 1
                    guard i < args.count else { throw Failure(code: .usage, message: "\(a) needs a value") }
                    values[a] = args[i]
                }
            } else if a.hasPrefix("-") && a != "-" {
                throw Failure(code: .usage, message: "unknown option '\(a)' for '\(command)'; see 'photoctl help \(command)'")
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    func int(_ key: String, default value: Int?, range: ClosedRange<Int>) throws(Failure) -> Int? {
        guard let text = values[key] else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw Failure(code: .usage, message: "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
        }
        return n
    }

    var json: Bool { flags.contains("--json") }
}

/// How long one call may wait for photod before photoctl gives up (exit 69).
let callTimeout: Duration = .seconds(60)

func connect(_ sockets: [PathBytes], timeout: Duration = callTimeout) throws(Failure) -> PhotoConnection {
    do {
        return try PhotoConnection.connect(anyOf: sockets, timeout: timeout)
    } catch {
        guard error.isPermissionDenied, case .unreachable(let socket, _) = error else {
            throw Failure(code: .unavailable, message: "\(error) (is photod running? see 'photod --help')")
        }
        let group = owningGroup(of: socket).map { "ask to be added to group \($0) (the socket's group), then log in again" }
        throw Failure(code: .noPermission, message: "cannot connect to photod at \(socket): permission denied: "
                                                    + (group ?? "ask for access to it"))
    }
}

/// The group that lets its members reach `socket`: the socket file's, or — when its directory
/// may not even be searched — that of the nearest directory above it that can be looked at.
func owningGroup(of socket: PathBytes) -> String? {
    var path = socket
    while true {
        if let st = try? FileStat.of(path) { return Groups.name(of: st.gid) ?? String(st.gid) }
        if path.bytes.count <= 1 { return nil }
        path = path.parent
    }
}

/// Calls `method`: the daemon's error is a failure (exit 1) with its message; a broken or
/// silent connection is exit 69.
func call(_ connection: PhotoConnection, _ method: String, _ params: JSONObject = [:]) throws(Failure) -> JSONValue {
    do {
        return try connection.call(method, params)
    } catch {
        switch error {
        case .rpc(let e): throw Failure(code: .failure, message: "\(method): \(error)", rpc: e)
        default: throw Failure(code: .unavailable, message: "\(error)")
        }
    }
}

/// A JSON array of strings.
func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }

func grouped(_ n: Int64) -> String { ProgressWords.grouped(n) }

func number(_ v: JSONValue?) -> String { v?.int64Value.map(grouped) ?? "-" }

func lpad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

/// The line under `text` that puts a `^` below the Unicode scalar at `position` (the offset
/// photod's predicate errors give); tabs are kept so that the caret lines up under them.
func caretLine(under text: String, at position: Int) -> String {
    var line = ""
    for (i, scalar) in text.unicodeScalars.enumerated() where i < position {
        line.append(scalar == "\t" ? "\t" : " ")
    }
    return line + "^"
}
