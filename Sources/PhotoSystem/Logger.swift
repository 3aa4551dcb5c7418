#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Syslog-style severities (the numbers are journald's `PRIORITY=`).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }

    public var name: String {
        switch self {
        case .error: return "error"
        case .warning: return "warning"
        case .notice: return "notice"
        case .info: return "info"
        case .debug: return "debug"
        }
    }
}

/// One log event: a message, its level, the component it came from, and structured fields
/// with dotted keys (`asset.path`, `batch.id`).
public struct LogRecord: Sendable {
    public var level: LogLevel
    public var facility: String
    public var message: String
    public var metadata: [(String, String)]
    public var file: String
    public var line: Int
}

/// Where log records go (stderr, the journal, a test's array).
public protocol LogSink: Sendable {
    func emit(_ record: LogRecord)
}

/// Plain lines on stderr: `photod[facility] level: message key=value ...`.
public struct StderrSink: LogSink {
    public init() {}
    public func emit(_ r: LogRecord) {
        var line = "\(r.level.name): [\(r.facility)] \(Self.escaped(r.message, quoteSpaces: false))"
        for (k, v) in r.metadata { line += " \(k)=\(Self.escaped(v, quoteSpaces: true))" }
        line += "\n"
        // One write(2) per record: lines from several threads never interleave.
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { b in _ = Glibc.write(2, b.baseAddress, b.count) }
    }
}

/// A logger for one component. Cheap to copy; the threshold is per logger, so that debug
/// output can be switched on per facility.
public struct Logger: Sendable {
    public var facility: String
    public var threshold: LogLevel
    let sink: any LogSink

    public init(facility: String, threshold: LogLevel = .info, sink: any LogSink = StderrSink()) {
        self.facility = facility
        self.threshold = threshold
        self.sink = sink
    }

    /// The same sink and threshold under another facility name.
    public func facility(_ name: String, threshold: LogLevel? = nil) -> Logger {
        Logger(facility: name, threshold: threshold ?? self.threshold, sink: sink)
    }

    /// A logger that drops everything (tests, tools).
    public static let silent = Logger(facility: "silent", threshold: .error, sink: NullSink())

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: [(String, String)] = [],
                    file: String = #fileID, line: Int = #line) {
        guard level.rawValue <= threshold.rawValue else { return }
        sink.emit(LogRecord(level: level, facility: facility, message: message(), metadata: metadata, file: file, line: line))
    }

    public func error(_ m: @autoclosure () -> String, _ md: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        log(.error, m(), md, file: file, line: line)
    }
    public func warning(_ m: @autoclosure () -> String, _ md: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        log(.warning, m(), md, file: file, line: line)
    }
    public func notice(_ m: @autoclosure () -> String, _ md: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        log(.notice, m(), md, file: file, line: line)
    }
    public func info(_ m: @autoclosure () -> String, _ md: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        log(.info, m(), md, file: file, line: line)
    }
    public func debug(_ m: @autoclosure () -> String, _ md: [(String, String)] = [], file: String = #fileID, line: Int = #line) {
        log(.debug, m(), md, file: file, line: line)
    }
}

extension StderrSink {
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

struct NullSink: LogSink {
    func emit(_ record: LogRecord) {}
}

/// Collects records in memory (tests assert on what was logged).
public final class MemorySink: LogSink {
    private let records = Mutex<[LogRecord]>([])
    public init() {}
    public func emit(_ record: LogRecord) { records.withLock { $0.append(record) } }
    public var all: [LogRecord] { records.withLock { $0 } }
}
