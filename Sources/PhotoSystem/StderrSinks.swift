#if canImport(Glibc)
import Glibc
#endif

/// Plain lines on stderr, for a terminal or a log file:
/// `warning: [pipeline] cannot read directory 'x', skipping: ... path=x`.
public struct StderrSink: LogSink {
    /// Where lines go (2, or a pipe in tests).
    public let fd: CInt

    public init(fd: CInt = 2) { self.fd = fd }

    public func emit(_ r: LogRecord) {
        LineWriter.write("\(r.level.name): " + LineWriter.body(r), to: fd)
    }

    /// One line per record, whatever a file name holds: control characters, quotes and
    /// backslashes are escaped, so a crafted name cannot forge log lines.
    static func escaped(_ text: String, quoteSpaces: Bool) -> String {
        var out = ""
        var needsQuotes = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"; needsQuotes = true
            case "\r": out += "\\r"; needsQuotes = true
            case "\t": out += "\\t"; needsQuotes = true
            case "\"": out += "\\\""; needsQuotes = true
            case "\\": out += "\\\\"
            case " ": out += " "; needsQuotes = true
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + String(scalar.value, radix: 16)
                    needsQuotes = true
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return quoteSpaces && needsQuotes ? "\"" + out + "\"" : out
    }
}

/// Lines on stderr when stderr is a journald stream (`JOURNAL_STREAM` matches it): each starts
/// with sd-daemon(3)'s `<N>` (`<3>` SD_ERR … `<7>` SD_DEBUG), which journald turns into the
/// record's priority and strips; no level name or timestamp, journald adds its own.
/// `<4>[pipeline] cannot read directory 'x', skipping: ... path=x`.
public struct JournalStreamSink: LogSink {
    /// Where lines go (2, or a pipe in tests).
    public let fd: CInt

    public init(fd: CInt = 2) { self.fd = fd }

    public func emit(_ r: LogRecord) {
        LineWriter.write("<\(r.level.rawValue)>" + LineWriter.body(r), to: fd)
    }
}

/// Formats and writes the line sinks' records.
enum LineWriter {
    /// Serializes writes by every line sink of the process, so that records longer than
    /// `PIPE_BUF` (written in several pieces) do not interleave.
    private static let lock = Locked<Void>(())

    /// `[facility] message key=value ...` on one line.
    static func body(_ r: LogRecord) -> String {
        var line = "[\(r.facility)] \(StderrSink.escaped(r.message, quoteSpaces: false))"
        for (k, v) in r.metadata { line += " \(StderrSink.escaped(k, quoteSpaces: true))=\(StderrSink.escaped(v, quoteSpaces: true))" }
        return line
    }

    /// Writes `line` and a newline, retrying on `EINTR` and short writes. Errors are dropped:
    /// there is nowhere left to report them.
    static func write(_ line: String, to fd: CInt) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            bytes.withUnsafeBytes { b in
                var done = 0
                while done < b.count {
                    let n = Glibc.write(fd, b.baseAddress! + done, b.count - done)
                    if n > 0 {
                        done += n
                    } else if n < 0 && errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }
}
