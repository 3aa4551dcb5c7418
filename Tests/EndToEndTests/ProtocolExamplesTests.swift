import Foundation
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The runnable examples of docs/PROTOCOL.md: each fenced code block that follows a line
/// `<!-- example: NAME -->`, exactly as a reader copies it.
enum ProtocolExamples {
    struct Example {
        var language: String
        var code: String
    }

    static let document = TestPaths.packageRoot.appendingPathComponent("docs/PROTOCOL.md")

    /// The examples by name.
    static func all() throws -> [String: Example] {
        let lines = try String(contentsOf: document, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var examples: [String: Example] = [:]
        var i = 0
        while i < lines.count {
            defer { i += 1 }
            guard let match = lines[i].wholeMatch(of: /<!-- example: ([a-z-]+) -->/), i + 1 < lines.count,
                  lines[i + 1].hasPrefix("```") else { continue }
            let language = String(lines[i + 1].dropFirst(3))
            var body: [Substring] = []
            i += 2
            while i < lines.count, lines[i] != "```" {
                body.append(lines[i])
                i += 1
            }
            examples[String(match.1)] = Example(language: language, code: body.joined(separator: "\n") + "\n")
        }
        return examples
    }

    /// Writes example `name` to a file in `directory` and returns its path.
    static func file(_ name: String, in directory: TemporaryDirectory) throws -> (path: String, language: String) {
        let example = try #require(try all()[name], "docs/PROTOCOL.md has no example '\(name)'")
        let path = try directory.write(name + (example.language == "python" ? ".py" : ".sh"), Array(example.code.utf8))
        return (path.string, example.language)
    }

    /// Runs example `name` to its end with exactly `environment` (where the socket is), in `directory`.
    static func run(_ name: String, in directory: TemporaryDirectory, environment: [String: String]) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let (path, language) = try file(name, in: directory)
        let interpreter = language == "python" ? try #require(PythonSubscriber.python) : URL(fileURLWithPath: "/bin/sh")
        return try runProcess(interpreter, [path], environment: environment, directory: directory.path)
    }

    static var hasSocat: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/socat") }
}

@Suite("The examples of docs/PROTOCOL.md, run as printed", .serialized)
struct ProtocolExamplesTests {
    /// The ways a user's environment can lead to the socket: photoctl's order, short of the system
    /// service's `/run/photod/photod.sock` (not for a test to create).
    static func environments(_ daemon: DaemonProcess) -> [[String: String]] {
        let directory = daemon.socket.parent.string
        return [exampleEnvironment(["PHOTOD_SOCKET": daemon.socket.string]),
                exampleEnvironment(["XDG_RUNTIME_DIR": directory]),
                exampleEnvironment(["RUNTIME_DIRECTORY": directory + ":/nonexistent", "XDG_RUNTIME_DIR": "/nonexistent"])]
    }

    /// Seven photos in one folder.
    static func library(_ lib: TemporaryDirectory) throws {
        for i in 0..<7 { try lib.write("a/p\(i).jpg", Library.jpeg(date: "2021:06:0\(1 + i) 09:00:00", width: 100 + i)) }
    }

    @Test("The marked examples are there, in the languages they are run with")
    func marked() throws {
        let examples = try ProtocolExamples.all()
        #expect(examples.keys.sorted() == ["python-fetch", "python-follow", "socat"])
        #expect(examples.values.allSatisfy { ["sh", "python"].contains($0.language) })
    }

    @Test("socat: one request at the socket photoctl finds", .enabled(if: ProtocolExamples.hasSocat, "socat is not installed (scripts/install-deps --tests)"))
    func socat() throws {
        try withDaemon("examples-socat", library: Self.library) { _, _, daemon in
            let current = try daemon.currentToken()
            let work = try TemporaryDirectory("examples-socat-run")
            defer { work.remove() }
            for environment in Self.environments(daemon) {
                let r = try ProtocolExamples.run("socat", in: work, environment: environment)
                #expect(r.status == 0, "\(environment): \(r.stderr)")
                let lines = try jsonLines(r.stdout)
                #expect(lines.count == 1, "\(r.stdout)")
                #expect(lines.first?["id"]?.intValue == 1)
                #expect(lines.first?["result"]?["token"]?.intValue == current, "\(environment): \(r.stdout)")
            }
        }
    }

    @Test("Python: the first five assets, at the socket photoctl finds",
          .enabled(if: PythonSubscriber.python != nil, "python3 is not installed (scripts/install-deps --tests)"))
    func pythonFetch() throws {
        try withDaemon("examples-fetch", library: Self.library) { _, state, daemon in
            let expected = (try daemon.call("assets.fetch", ["limit": 5])["assets"]?.arrayValue ?? [])
                .map { "\($0["id"]?.stringValue ?? "?") \($0["path"]?.stringValue ?? "?")" }
            #expect(expected.count == 5)
            let work = try TemporaryDirectory("examples-fetch-run")
            defer { work.remove() }
            for environment in Self.environments(daemon) {
                let r = try ProtocolExamples.run("python-fetch", in: work, environment: environment)
                #expect(r.status == 0, "\(environment): \(r.stderr)")
                #expect(r.stdout.split(separator: "\n").map(String.init) == expected, "\(environment)")
            }
            // No daemon at the socket: the error says so (the system service's socket is tried too).
            let r = try ProtocolExamples.run("python-fetch", in: work, environment: exampleEnvironment(["PHOTOD_SOCKET": state("none.sock").string]))
            #expect(r.status != 0 && r.stderr.contains("FileNotFoundError"), "\(r.stderr)")
        }
    }

    @Test("Python: the refetching subscriber resumes from its token across photod's SIGTERM (photod.stopping) and kill -9, each change once",
          .enabled(if: PythonSubscriber.python != nil, "python3 is not installed (scripts/install-deps --tests)"))
    func pythonFollow() throws {
        let lib = try TemporaryDirectory("examples-follow-lib")
        defer { lib.remove() }
        try Self.library(lib)
        let state = try TemporaryDirectory("examples-follow")
        defer { state.remove() }
        var daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let start = try daemon.currentToken()
        let work = try TemporaryDirectory("examples-follow-run")
        defer { work.remove() }
        let (script, _) = try ProtocolExamples.file("python-follow", in: work)
        let follower = try PythonSubscriber(script: script, environment: exampleEnvironment(["XDG_RUNTIME_DIR": state.path.string]),
                                            directory: work.path)
        defer { follower.kill() }
        // Its first run refetches (pages of the library) and keeps the fetch's token.
        try daemon.waitFor("the subscriber's first token") { _ in
            (try? String(contentsOfFile: work("token").string, encoding: .utf8)) == String(start)
        }

        try lib.write("b/live.jpg", Library.jpeg(date: "2021:07:01 09:00:00", width: 300))
        try daemon.waitForAssets(8)
        let live = try daemon.currentToken()
        try follower.waitFor(token: live)

        // SIGTERM: photod says photod.stopping; a photo comes while it is down; it starts again.
        #expect(daemon.stop() == 0)
        try lib.write("b/while-stopped.jpg", Library.jpeg(date: "2021:07:02 09:00:00", width: 301))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForAssets(9)
        let afterStop = try daemon.currentToken()
        #expect(afterStop > live)
        try follower.waitFor(token: afterStop)
        // A change made on the new daemon reaches the reconnected subscriber too.
        let p0 = try #require(try daemon.idsByPath()[lib("a/p0.jpg").string])
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(p0)], "favorite": true])
        let favorite = try daemon.currentToken()
        try follower.waitFor(token: favorite)

        // kill -9: no goodbye, the connection just ends.
        daemon.kill9()
        try lib.write("b/while-killed.jpg", Library.jpeg(date: "2021:07:03 09:00:00", width: 302))
        daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { daemon.stop() }
        try daemon.waitForAssets(10)
        let afterKill = try daemon.currentToken()
        #expect(afterKill > favorite)
        try follower.waitFor(token: afterKill)

        #expect(follower.process.isRunning, "it never exits on its own")
        #expect(follower.tokens.map(Int64.init) == (try daemon.journalTokens(after: Int64(start))), "each change set once, in order")
        #expect(follower.tokens.last == afterKill)
        #expect(follower.changeSets == (try daemon.call("changes.since", ["since": .int(Int64(start))])["changes"]?.arrayValue ?? []))
        // It prints a change set, then saves its token.
        try eventually("the token file saying \(afterKill)") { try String(contentsOfFile: work("token").string, encoding: .utf8) } until: {
            $0 == String(afterKill)
        }
    }
}
