#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// Where photod's records go, decided once at startup (`LogSetup.destination`).
public enum LogDestination: Sendable, Equatable {
    /// journald's native protocol on `socket`, with every metadata pair as a field. Records
    /// that cannot be sent go to stderr: with `<N>` prefixes when `stderrIsJournal`.
    case journal(socket: String, stderrIsJournal: Bool)
    /// `<N>`-prefixed lines on stderr, which is a journald stream (`JOURNAL_STREAM`).
    case journalStream
    /// Plain lines on stderr (a terminal, a file, a test's pipe).
    case stderr
}

/// Picks the log sink for the daemon.
///
/// - `PHOTOD_JOURNAL_SOCKET=PATH` set and a writable socket: the native protocol to PATH
///   (tests point it at a fake journal; it also forces the journal when stderr is not one).
/// - Else, stderr is connected to the journal (`JOURNAL_STREAM`, set by systemd, names the
///   device and inode of stderr; systemd.exec(5)): the native protocol to
///   `/run/systemd/journal/socket` when that is a writable socket, else `<N>` lines on stderr.
/// - Else plain lines on stderr. Run from a terminal, photod logs to the terminal even on a
///   machine with journald: the native protocol is an upgrade of a journal stream, not a
///   redirection of stderr.
public enum LogSetup {
    /// journald's socket for the native protocol.
    public static let defaultJournalSocket = "/run/systemd/journal/socket"
    /// Overrides `defaultJournalSocket` (and is used even when stderr is not the journal).
    public static let journalSocketVariable = "PHOTOD_JOURNAL_SOCKET"

    /// The decision, on the facts given: `stderrIdentity` is fstat(2)'s device and inode of
    /// stderr; `isWritableSocket` tells whether a path is a socket this process may write to.
    public static func destination(environment: [String: String], stderrIdentity: (device: UInt64, inode: UInt64)?,
                                   isWritableSocket: (String) -> Bool) -> LogDestination {
        let stderrIsJournal = stderrIdentity.map { journalStream(environment["JOURNAL_STREAM"], matches: $0) } ?? false
        if let socket = environment[journalSocketVariable], !socket.isEmpty, isWritableSocket(socket) {
            return .journal(socket: socket, stderrIsJournal: stderrIsJournal)
        }
        guard stderrIsJournal else { return .stderr }
        if isWritableSocket(defaultJournalSocket) { return .journal(socket: defaultJournalSocket, stderrIsJournal: true) }
        return .journalStream
    }

    /// The decision for this process (fd 2, the real file system).
    public static func destination(environment: [String: String]) -> LogDestination {
        let identity = try? FileDescriptor(rawValue: 2).stat()
        return destination(environment: environment, stderrIdentity: identity.map { ($0.device, $0.inode) },
                           isWritableSocket: isWritableSocket)
    }

    /// The sink for `destination`; line sinks write to `stderr`. A journal socket that cannot
    /// be opened falls back to stderr.
    public static func sink(for destination: LogDestination, stderr: CInt = 2, identifier: String = "photod") -> any LogSink {
        switch destination {
        case .journal(let socket, let stderrIsJournal):
            let fallback: any LogSink = stderrIsJournal ? JournalStreamSink(fd: stderr) : StderrSink(fd: stderr)
            return (try? JournalSink(path: socket, identifier: identifier, fallback: fallback)) ?? fallback
        case .journalStream:
            return JournalStreamSink(fd: stderr)
        case .stderr:
            return StderrSink(fd: stderr)
        }
    }

    /// The sink for this process: `sink(for: destination(environment:))`.
    public static func sink(environment: [String: String]) -> any LogSink {
        sink(for: destination(environment: environment))
    }

    /// Whether `JOURNAL_STREAM` (`DEVICE:INODE`, both decimal) names the file `identity` is of.
    public static func journalStream(_ value: String?, matches identity: (device: UInt64, inode: UInt64)) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        return device == identity.device && inode == identity.inode
    }

    /// Whether `fd` is the file `JOURNAL_STREAM` names (systemd connected it to the journal).
    public static func journalStream(_ value: String?, matches fd: FileDescriptor) -> Bool {
        guard let st = try? fd.stat() else { return false }
        return journalStream(value, matches: (st.device, st.inode))
    }

    /// `path` is a socket and `access(W_OK)` allows writing to it.
    public static func isWritableSocket(_ path: String) -> Bool {
        guard let st = try? FileStat.of(PathBytes(path)), st.mode & UInt32(S_IFMT) == UInt32(S_IFSOCK) else { return false }
        return access(path, W_OK) == 0
    }
}

extension Logger {
    /// The daemon's root logger (facility `photod`): the sink `LogSetup` picks from
    /// `environment` (journal, journal stream or plain stderr), `threshold` from `--log-level`,
    /// and the facilities `PHOTOD_DEBUG` switches to debug (`watch,pipeline,store,wire` or
    /// `all`; see `DebugFacilities`). Derive component loggers with `facility(_:)`.
    public static func daemon(threshold: LogLevel, environment: [String: String]) -> Logger {
        let destination = LogSetup.destination(environment: environment)
        let debug = DebugFacilities.parse(environment[DebugFacilities.environmentVariable])
        let logger = Logger(facility: "photod", threshold: threshold, sink: LogSetup.sink(for: destination), debug: debug)
        switch destination {
        case .journal(let socket, _): logger.debug("logging to the journal's native protocol", [("socket", socket)])
        case .journalStream: logger.debug("logging to stderr, a journal stream")
        case .stderr: logger.debug("logging to stderr")
        }
        if debug != .none {
            logger.debug("debug output for facilities: \(debug.all ? "all" : debug.names.sorted().joined(separator: ","))")
        }
        return logger
    }
}
