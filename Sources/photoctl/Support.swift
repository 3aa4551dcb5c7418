import Foundation
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// The parts every subcommand shares: exit codes, output, option parsing, calls to photod.

/// photoctl's exit statuses (sysexits.h's for usage and an unreachable service).
enum Exit: Int32 {
    case ok = 0, failure = 1, usage = 64, unavailable = 69
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

/// Writes all of `text` to `fd` with write(2): nothing is buffered, so each line is out (in a
/// pipe too) as soon as this returns.
func write(_ text: String, to fd: Int32) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { raw in
        var off = 0
        while off < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + off, raw.count - off)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            off += n
        }
    }
}

/// A line of data on stdout.
func out(_ line: String) { write(line + "\n", to: 1) }
/// A line of diagnostics on stderr.
func err(_ line: String) { write(line + "\n", to: 2) }

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
        throw Failure(code: .unavailable, message: "\(error) (is photod running? see 'photod --help')")
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

func grouped(_ n: Int64) -> String {
    let s = String(n)
    var out = ""
    for (i, c) in s.reversed().enumerated() {
        if i > 0, i % 3 == 0, c != "-" { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

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
