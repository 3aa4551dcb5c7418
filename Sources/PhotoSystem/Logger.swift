#if canImport(Glibc)
import Glibc
#endif

/// Syslog-style severities (the numbers are journald's `PRIORITY=` and sd-daemon(3)'s `<N>`).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }

    /// The name `--log-level` takes (`warning`).
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

/// One log event: a message, its level, the component it came from, structured fields with
/// dotted keys (`asset.path`, `batch.id`), and where in the source it was logged.
public struct LogRecord: Sendable {
    /// journald's `PRIORITY`.
    public var level: LogLevel
    /// The component (`pipeline`, `watch`, `wire`): journald's `PHOTOD_FACILITY`.
    public var facility: String
    /// journald's `MESSAGE`.
    public var message: String
    /// Key–value pairs with dotted keys; in the journal, `asset.id` is `PHOTOD_ASSET_ID`.
    public var metadata: [(String, String)]
    /// `#fileID` of the call (`PhotoPipeline/Walk.swift`): journald's `CODE_FILE`.
    public var file: String
    /// journald's `CODE_LINE`.
    public var line: Int
    /// `#function` of the call (`run()`), empty when unknown: journald's `CODE_FUNC`.
    public var function: String

    public init(level: LogLevel, facility: String, message: String, metadata: [(String, String)] = [],
                file: String = "", line: Int = 0, function: String = "") {
        self.level = level
        self.facility = facility
        self.message = message
        self.metadata = metadata
        self.file = file
        self.line = line
        self.function = function
    }
}

/// Where log records go: the journal (`JournalSink`), stderr (`StderrSink`,
/// `JournalStreamSink`), a test's array (`MemorySink`). `LogSetup` picks one at startup.
public protocol LogSink: Sendable {
    func emit(_ record: LogRecord)
}

/// The facilities that log at debug whatever the threshold: `PHOTOD_DEBUG=watch,pipeline` or
/// `PHOTOD_DEBUG=all`. A name also covers its dotted children (`pipeline` covers `pipeline.sort`).
public struct DebugFacilities: Sendable, Hashable {
    /// Every facility logs at debug.
    public var all: Bool
    /// The facilities named (lower-cased).
    public var names: Set<String>

    public init(all: Bool = false, names: Set<String> = []) {
        self.all = all
        self.names = names
    }

    /// No facility is switched to debug.
    public static let none = DebugFacilities()

    /// The environment variable `parse(_:)` reads in `Logger.daemon`.
    public static let environmentVariable = "PHOTOD_DEBUG"

    /// Parses `PHOTOD_DEBUG`: names separated by commas (spaces allowed), case-insensitive;
    /// `all` (or `*`) switches every facility. Empty or missing: none.
    public static func parse(_ text: String?) -> DebugFacilities {
        guard let text else { return .none }
        var result = DebugFacilities()
        for part in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            let name = part.lowercased()
            if name == "all" || name == "*" { result.all = true } else { result.names.insert(name) }
        }
        return result
    }

    /// Whether `facility` (or a dotted parent of it) is switched to debug.
    public func contains(_ facility: String) -> Bool {
        if all { return true }
        if names.isEmpty { return false }
        var name = Substring(facility.lowercased())
        while true {
            if names.contains(String(name)) { return true }
            guard let dot = name.lastIndex(of: ".") else { return false }
            name = name[..<dot]
        }
    }
}

/// A logger for one component: its facility name and threshold, plus a reference to what
/// every logger of the process shares (the sink, the `--log-level`, the debug facilities).
/// Cheap to copy: a string, a level and one reference.
public struct Logger: Sendable {
    /// What all loggers derived from one root share.
    final class Root: Sendable {
        let sink: any LogSink
        /// The level asked for (`--log-level`); facilities not switched to debug start here.
        let threshold: LogLevel
        let debug: DebugFacilities

        init(sink: any LogSink, threshold: LogLevel, debug: DebugFacilities) {
            self.sink = sink
            self.threshold = threshold
            self.debug = debug
        }

        func threshold(for facility: String) -> LogLevel {
            debug.contains(facility) ? .debug : threshold
        }
    }

    /// The component this logger speaks for (`photod`, `pipeline`, `watch`, `store`, `wire`).
    public var facility: String
    /// Records less severe than this are dropped (before their message is built).
    public var threshold: LogLevel
    let root: Root

    /// A root logger. `threshold` is the process's level; facilities named in `debug` (this one
    /// included) log at debug.
    public init(facility: String, threshold: LogLevel = .info, sink: any LogSink = StderrSink(),
                debug: DebugFacilities = .none) {
        root = Root(sink: sink, threshold: threshold, debug: debug)
        self.facility = facility
        self.threshold = root.threshold(for: facility)
    }

    private init(facility: String, threshold: LogLevel, root: Root) {
        self.facility = facility
        self.threshold = threshold
        self.root = root
    }

    /// The same sink under another facility name. Its threshold is debug when the root's debug
    /// facilities name it (`PHOTOD_DEBUG`), else the root's level; an explicit `threshold` wins.
    public func facility(_ name: String, threshold: LogLevel? = nil) -> Logger {
        Logger(facility: name, threshold: threshold ?? root.threshold(for: name), root: root)
    }

    /// The sink records go to.
    public var sink: any LogSink { root.sink }

    /// The facilities switched to debug for every logger sharing this one's root.
    public var debugFacilities: DebugFacilities { root.debug }

    /// A logger that drops everything (tests, tools).
    public static let silent = Logger(facility: "silent", threshold: .error, sink: NullSink())

    /// Whether a record at `level` would be emitted (to skip building expensive metadata).
    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue <= threshold.rawValue }

    /// Emits a record when `level` passes the threshold; the message and metadata are only
    /// built then. `file`, `line` and `function` become journald's `CODE_*` fields.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = [],
                    file: String = #fileID, line: Int = #line, function: String = #function) {
        guard level.rawValue <= threshold.rawValue else { return }
        root.sink.emit(LogRecord(level: level, facility: facility, message: message(), metadata: metadata(),
                                 file: file, line: line, function: function))
    }

    /// `log(.error, …)`: something failed and photod could not make up for it.
    public func error(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = [],
                      file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.error, m(), md(), file: file, line: line, function: function)
    }
    /// `log(.warning, …)`: a problem photod works around ("…, skipping").
    public func warning(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = [],
                        file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.warning, m(), md(), file: file, line: line, function: function)
    }
    /// `log(.notice, …)`: normal but significant (startup, shutdown, a rescan asked for).
    public func notice(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = [],
                       file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.notice, m(), md(), file: file, line: line, function: function)
    }
    /// `log(.info, …)`: progress worth a line (a scan finished).
    public func info(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = [],
                     file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.info, m(), md(), file: file, line: line, function: function)
    }
    /// `log(.debug, …)`: detail for `--log-level debug` or `PHOTOD_DEBUG=facility`.
    public func debug(_ m: @autoclosure () -> String, _ md: @autoclosure () -> [(String, String)] = [],
                      file: String = #fileID, line: Int = #line, function: String = #function) {
        log(.debug, m(), md(), file: file, line: line, function: function)
    }
}

/// Drops every record.
struct NullSink: LogSink {
    func emit(_ record: LogRecord) {}
}

/// Collects records in memory (tests assert on what was logged).
public final class MemorySink: LogSink {
    private let records = Locked<[LogRecord]>([])
    public init() {}
    /// Keeps the record.
    public func emit(_ record: LogRecord) { records.withLock { $0.append(record) } }
    /// Every record so far, oldest first.
    public var all: [LogRecord] { records.withLock { $0 } }
}
