import Foundation
import PhotoClient
import PhotoModel
import PhotoTesting
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// A real `photod` process on a temporary state directory, driven like a user would.
final class DaemonProcess {
    let process = Process()
    let state: TemporaryDirectory
    let socket: PathBytes
    let database: PathBytes
    let logFile: URL

    /// Starts `photod --library ... --database STATE/photod.db --socket STATE/photod.sock`.
    /// `environment` adds to (or, with a value, overrides) the test process's own.
    /// `user`: run photod as `nobody:nogroup` (through `setpriv`, which execs it: the pid is
    /// photod's), so that file permissions apply to it; the caller must be root.
    init(libraries: [PathBytes], state: TemporaryDirectory, database: PathBytes? = nil, arguments: [String] = [],
         environment: [String: String] = [:], asNobody: Bool = false) throws {
        self.state = state
        socket = state("photod.sock")
        self.database = database ?? state("photod.db")
        logFile = URL(fileURLWithPath: state("photod-\(UInt32.random(in: 0 ... .max)).log").string)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let photod = TestPaths.products.appendingPathComponent("photod")
        process.executableURL = asNobody ? URL(fileURLWithPath: "/usr/bin/setpriv") : photod
        process.arguments = (asNobody ? ["--reuid=nobody", "--regid=nogroup", "--clear-groups", photod.path] : [])
            + libraries.flatMap { ["--library", $0.string] }
            + ["--database", self.database.string, "--socket", socket.string, "--timezone", "UTC", "--log-level", "debug"]
            + (arguments.contains { $0.hasPrefix("--cache-dir") } ? [] : ["--cache-dir", state("cache").string])
            + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    /// What the daemon logged so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// A fresh connection, once the socket answers (photod may still be starting).
    func connect(timeout: Duration = .seconds(30)) throws -> PhotoConnection {
        let attempt = try eventually("photod's socket to answer; photod's log:\n\(log)", timeout: timeout) {
            let attempt = Result { () throws(ClientError) in try PhotoConnection(socket: socket) }
            if case .failure(let error) = attempt, !process.isRunning { throw HarnessError("photod exited (\(error)):\n\(log)") }
            return attempt
        } until: { if case .success = $0 { true } else { false } }
        return try attempt.get()
    }

    func call(_ method: String, _ params: JSONObject = [:]) throws -> JSONValue {
        try connect().call(method, params)
    }

    /// Waits until `library.status` says idle; returns that status.
    @discardableResult
    func waitForIdle(timeout: Duration = .seconds(120)) throws -> JSONValue {
        let c = try connect()
        return try eventually("photod idle", timeout: timeout) { try c.call("library.status") } until: { $0["state"]?.stringValue == "idle" }
    }

    /// Waits until photod's log has `text`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(30)) throws {
        try eventually("'\(text)' in photod's log:\n\(log)", timeout: timeout) { log.contains(text) }
    }

    /// Every asset, paging through `assets.fetch`.
    func allAssets() throws -> [JSONValue] {
        let c = try connect()
        var all: [JSONValue] = []
        var offset = 0
        while true {
            let page = try c.call("assets.fetch", ["limit": 1000, "offset": .int(Int64(offset))])
            let assets = page["assets"]?.arrayValue ?? []
            all += assets
            guard let next = page["nextOffset"]?.intValue else { return all }
            offset = next
        }
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The tokens of the change sets the journal holds after `token`, oldest first (every page
    /// of `changes.since`). They are consecutive but where a stop that was not clean made the
    /// numbers jump.
    func journalTokens(after token: Int64) throws -> [Int64] {
        var since = token
        var tokens: [Int64] = []
        while true {
            let page = try call("changes.since", ["since": .int(since), "limit": 1000])
            tokens += (page["changes"]?.arrayValue ?? []).compactMap { $0["token"]?.int64Value }
            since = page["token"]?.int64Value ?? since
            if page["more"]?.boolValue != true { return tokens }
        }
    }

    /// SIGKILL: no chance to clean up.
    func kill9() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Runs `body` once photod, started with `arguments`, has indexed the library that `library`
/// writes into a fresh directory (its state in another, which `prepare` may change first); then
/// stops photod and removes both directories.
@discardableResult
func withDaemon<T>(_ label: String, arguments: [String] = [], library: (TemporaryDirectory) throws -> Void,
                   prepare: (TemporaryDirectory) throws -> Void = { _ in },
                   _ body: (_ lib: TemporaryDirectory, _ state: TemporaryDirectory, _ daemon: DaemonProcess) throws -> T) throws -> T {
    let lib = try TemporaryDirectory(label + "-lib")
    defer { lib.remove() }
    let state = try TemporaryDirectory(label)
    defer { state.remove() }
    try library(lib)
    try prepare(state)
    let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: arguments)
    defer { daemon.stop() }
    do {
        try daemon.waitForIdle()
        return try body(lib, state, daemon)
    } catch {
        // What the daemon said is gone with its state directory: keep its end with the error.
        throw HarnessError("\(error)\n--- photod's log, last 80 lines:\n" + daemon.log.split(separator: "\n").suffix(80).joined(separator: "\n"))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

extension Process {
    /// Waits until the process has exited (Foundation reaps it: its `waitpid` is not ours to
    /// call); throws `WaitTimeout` after `timeout`, scaled.
    func waitForExit(timeout: Duration = .seconds(10), fileID: String = #fileID, line: Int = #line) throws {
        try eventually("\(executableURL?.lastPathComponent ?? "a process") to exit", timeout: timeout, fileID: fileID, line: line) { !isRunning }
    }
}

/// Runs a built command-line tool and returns its exit status and output.
/// - Parameters:
///   - asUser: run it as this user and group (`setpriv`, no supplementary groups unless
///     `groups` names some); the caller must be root.
///   - stdout: where its standard output goes instead of the returned string (`/dev/full`).
///   - timeout: how long it may run before it is killed (SIGKILL: the status is then 9).
func run(_ tool: String, _ arguments: [String], environment: [String: String]? = nil, asUser: (user: String, group: String)? = nil,
         groups: [String] = [], stdout: FileHandle? = nil, timeout: Duration? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let binary = TestPaths.products.appendingPathComponent(tool)
    guard let asUser else { return try runProcess(binary, arguments, environment: environment, stdout: stdout, timeout: timeout) }
    return try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"),
                          ["--reuid=\(asUser.user)", "--regid=\(asUser.group)"]
                              + (groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.joined(separator: ","))"]) + [binary.path] + arguments,
                          environment: environment, stdout: stdout, timeout: timeout)
}

/// Runs `executable` to its end and returns its exit status and output (see `run`); in
/// `directory` when one is given, with exactly `environment` when one is given.
func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: PathBytes? = nil,
                stdout: FileHandle? = nil, timeout: Duration? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let p = Process()
    p.executableURL = executable
    p.arguments = arguments
    if let environment { p.environment = environment }
    if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory.string) }
    let out = Pipe(), err = Pipe()
    p.standardOutput = stdout ?? out
    p.standardError = err
    try p.run()
    if let timeout {
        Thread.detachNewThread {
            if (try? p.waitForExit(timeout: timeout)) == nil { Glibc.kill(p.processIdentifier, SIGKILL) }
        }
    }
    // Read before waiting: a full pipe would block the child.
    let o = stdout == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

/// The JSON objects of `--json` output, one per line.
func jsonLines(_ text: String) throws -> [JSONValue] {
    try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
}

/// The records of a list command's `--json` output, without its last line, `{"token": N}`.
func records(_ text: String) throws -> [JSONValue] {
    try listing(text).records
}

/// A list command's `--json` output: the records, and the token of its last line (nil when
/// that line is not `{"token": N}`).
func listing(_ text: String) throws -> (records: [JSONValue], token: Int?) {
    var lines = try jsonLines(text)
    guard case .object(let last)? = lines.last, last.count == 1, let token = last["token"]?.intValue else { return (lines, nil) }
    lines.removeLast()
    return (lines, token)
}

/// Whether the daemon under test is built with AddressSanitizer (`scripts/sanitize address`):
/// its RSS then also holds shadow memory, redzones and a quarantine of freed blocks (256 MB), so
/// memory bounds meant for the daemon as built are not checked.
var memoryIsInstrumented: Bool { ProcessInfo.processInfo.environment["PHOTOD_TEST_SANITIZER"] == "address" }

/// A Unix datagram socket bound to `path` (what systemd's notify socket and journald's are),
/// for tests that stand in for them.
func bindDatagramSocket(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let rc = withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0 else {
        close(fd)
        throw HarnessError("bind \(path): \(errno)")
    }
    return fd
}
