import Foundation
import PhotoClient
@testable import PhotoDaemon
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing

/// The daemon built and run inside the test's own process, as `photod` runs it but without a
/// process of its own: its services start in order, answer on a socket, follow the library,
/// and stop in reverse — and every thread they started has ended by then.
@Suite("The daemon in-process")
struct InProcessDaemonTests {
    @Test("Started in-process on a temporary library: it indexes, answers, follows a change, stops, and leaves no thread")
    func startTalkStop() throws {
        let (lib, state) = try (TemporaryDirectory("inproc-lib"), TemporaryDirectory("inproc-state"))
        defer {
            lib.remove()
            state.remove()
        }
        for i in 0..<3 { try lib.write("2024/day\(i).jpg", JPEGFixture.make(width: 64 + i, height: 48)) }
        let daemon = try Self.start(library: lib, state: state)
        var stopped = false
        defer { if !stopped { daemon.stop() } }
        #expect(!daemon.threads.runningThreads.isEmpty, "the services run threads of their own")

        // Every change set since the start, as a subscriber sees them: the index, then a new file.
        let client = try PhotoConnection(socket: state("photod.sock"), timeout: .seconds(60) * TestTime.scale)
        defer { client.close() }
        _ = try client.call("changes.subscribe", ["since": .int(0)])
        var seen = Set<String>()
        func awaitAssets(_ n: Int) throws {
            while seen.count < n {
                let change = try client.nextNotification()
                guard change.method == "changes", case .array(let inserted)? = change.params?["assets"]?["inserted"] else { continue }
                for case .string(let id) in inserted { seen.insert(id) }
            }
        }
        try awaitAssets(3)
        let page = try client.call("assets.fetch", ["limit": .int(10)])
        #expect(page["total"] == .int(3))

        try lib.write("2024/later.jpg", JPEGFixture.make(width: 80, height: 60))
        try awaitAssets(4)
        let status = try client.call("library.status")
        #expect(status["counts"]?["assets"] == .int(4))

        stopped = true
        #expect(daemon.stop())
        #expect(!daemon.stop(), "a second stop does nothing")
        #expect(daemon.threads.waitUntilEnded(timeout: .seconds(30) * TestTime.scale) == [],
                "every thread the daemon started has ended")
        #expect(access(state("photod.sock").string, F_OK) != 0, "the socket file is removed")
        // The database was sealed at the stop: the next open skips its checks.
        #expect(FileManager.default.fileExists(atPath: state("photod.db").string + ".clean"))
    }

    /// Starts a daemon in-process on `library`, its database, socket and cache in `state`.
    static func start(library: TemporaryDirectory, state: TemporaryDirectory, environment: [String: String] = [:]) throws -> RunningDaemon {
        let options = try DaemonOptions.parse(["--library", library.path.string, "--database", state("photod.db").string,
                                               "--socket", state("photod.sock").string, "--cache-dir", state("cache").string],
                                              environment: [:])
        return try Daemon(options: options, logger: .silent, environment: environment).start()
    }
}
