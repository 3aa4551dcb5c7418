import Foundation
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// photoctl as an operator meets it: a socket it may not open, a full disk under its output,
/// options in either place, and scripts that snapshot a listing and then watch from it.
@Suite("photoctl, as an operator meets it", .serialized)
struct CLIOperatorTests {
    /// Whether the tests may run photoctl as another user (root, with `setpriv`).
    static let canSwitchUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    static let hasDevFull = FileManager.default.isWritableFile(atPath: "/dev/full")

    /// A small library: three photos in two folders.
    static func library(_ lib: TemporaryDirectory) throws {
        try lib.write("a/p1.jpg", Library.jpeg(date: "2021:01:01 09:00:00", width: 200))
        try lib.write("a/p2.jpg", Library.jpeg(date: "2021:02:01 09:00:00", width: 210))
        try lib.write("b/p3.jpg", Library.jpeg(date: "2021:03:01 09:00:00", width: 220))
    }

    @Test("A socket photoctl may not open: 'permission denied: ask to be added to group G' (the socket's group), exit 77",
          .enabled(if: canSwitchUser, "needs root and setpriv to run photoctl as nobody"))
    func permissionDenied() throws {
        // The socket's directory lets everyone through; the socket itself is 0660 root:users.
        try withDaemon("ctl-op-perm", arguments: ["--socket-group", "users"], library: Self.library,
                       prepare: { #expect(chmod($0.path.string, 0o755) == 0) }) { _, state, daemon in
            let nobody = (user: "nobody", group: "nogroup")
            let environment = ["PATH": "/usr/bin:/bin"]

            // Named with --socket, and found as the per-user socket ($XDG_RUNTIME_DIR) with the
            // system service's socket tried after it.
            for (arguments, env) in [(["--socket", daemon.socket.string, "status"], environment),
                                     (["status"], environment.merging(["XDG_RUNTIME_DIR": state.path.string]) { _, new in new }),
                                     (["assets", "--json"], environment.merging(["PHOTOD_SOCKET": daemon.socket.string]) { _, new in new })] {
                let r = try run("photoctl", arguments, environment: env, asUser: nobody)
                #expect(r.status == 77, "\(arguments): \(r.stderr)")
                #expect(r.stderr.contains("permission denied: ask to be added to group users"), "\(arguments): \(r.stderr)")
                #expect(r.stderr.contains(daemon.socket.string), "\(arguments): \(r.stderr)")
                #expect(!r.stderr.contains("is photod running"), "\(arguments): \(r.stderr)")
                #expect(r.stdout.isEmpty)
            }
            // A member of the group may.
            let member = try run("photoctl", ["--socket", daemon.socket.string, "status"], environment: environment, asUser: nobody,
                                 groups: ["users"])
            #expect(member.status == 0, "\(member.stderr)")
            // A socket that is not there is still "unreachable" (69).
            let missing = try run("photoctl", ["--socket", state("nothing.sock").string, "status"], environment: environment, asUser: nobody)
            #expect(missing.status == 69, "\(missing.stderr)")
        }
    }

    @Test("A failed write to stdout (/dev/full) is exit 1 with 'write error' on stderr, at once or at the final flush",
          .enabled(if: hasDevFull, "needs /dev/full"))
    func writeErrors() throws {
        try withDaemon("ctl-op-full", library: {
            try Self.library($0)
            try Library.generate($0, count: 300)
        }) { lib, _, daemon in
            let sock = ["--socket", daemon.socket.string]
            let start = try daemon.currentToken()
            _ = try daemon.call("assets.setFavorite", ["ids": [.string(try #require(try daemon.idsByPath()[lib("a/p1.jpg").string]))],
                                                       "favorite": true])
            // Small outputs (written at the end) and large ones (written as they come); a watch,
            // which writes each change set at once.
            for arguments in [["--help"], ["--version"], ["help", "assets"], sock + ["status"], sock + ["status", "--json"],
                              sock + ["assets"], sock + ["assets", "--json"], sock + ["assets", "--json", "--limit", "1"],
                              sock + ["smart-albums", "--json"], sock + ["watch", "--since", String(start), "--json"]] {
                let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
                defer { try? full.close() }
                // The old photoctl went on watching, its writes failing unseen: not for ever here.
                let r = try run("photoctl", arguments, stdout: full, timeout: .seconds(20))
                #expect(r.status == 1, "\(arguments): \(r.stderr)")
                #expect(r.stderr == "photoctl: write error: No space left on device\n", "\(arguments)")
            }
        }
    }

    @Test("--json before the subcommand, as --socket")
    func jsonFirst() throws {
        try withDaemon("ctl-op-json", library: Self.library) { _, _, daemon in
            let sock = ["--socket", daemon.socket.string]
            for command in [["assets"], ["moments"], ["albums"], ["smart-albums"], ["folders"], ["errors"], ["album", "list"]] {
                let before = try run("photoctl", ["--json"] + sock + command)
                let after = try run("photoctl", sock + command + ["--json"])
                #expect(before.status == 0 && after.status == 0, "\(command): \(before.stderr)")
                #expect(before.stdout == after.stdout, "\(command)")
            }
            let status = try run("photoctl", sock + ["--json", "status"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(try JSONValue.parse(status.stdout.trimmingCharacters(in: .newlines))["state"]?.stringValue == "idle")
            let created = try run("photoctl", ["--json"] + sock + ["album", "create", "Trip"])
            #expect(try jsonLines(created.stdout).first?["id"]?.stringValue?.hasPrefix("u_") == true, "\(created.stderr)")
            #expect(try run("photoctl", ["--json", "album"]).status == 64)
        }
    }

    @Test("--json lists end with {\"token\": N}; a snapshot, then watch --since N, misses nothing and repeats nothing")
    func snapshotThenWatch() throws {
        let spare = try TemporaryDirectory("ctl-op-spare")
        defer { spare.remove() }
        try spare.write("p4.jpg", Library.jpeg(date: "2021:04:01 09:00:00", width: 230))
        try withDaemon("ctl-op-token", library: Self.library) { lib, _, daemon in
            let sock = ["--socket", daemon.socket.string]
            func ctl(_ arguments: [String]) throws -> String {
                let r = try run("photoctl", sock + arguments)
                #expect(r.status == 0, "\(arguments): \(r.stderr)")
                return r.stdout
            }
            let ids = try daemon.idsByPath()
            let p1 = try #require(ids[lib("a/p1.jpg").string]), p2 = try #require(ids[lib("a/p2.jpg").string])
            #expect(!(try ctl(["album", "create", "Trip"]).isEmpty))
            // A change before the snapshot: the snapshot reflects it, the watch must not repeat it.
            #expect(!(try ctl(["favorite", p1]).isEmpty))
            let current = try daemon.currentToken()

            // Every list command: its records, then {"token": N} with the token they reflect.
            for command in [["assets"], ["assets", "--in", "s_allPhotos"], ["assets", "--limit", "1"], ["moments"], ["albums"],
                            ["smart-albums"], ["folders"], ["album", "list"]] {
                let (records, token) = try listing(try ctl(command + ["--json"]))
                #expect(token == current, "\(command)")
                #expect(!records.isEmpty && records.allSatisfy { $0["id"] != nil }, "\(command)")
            }
            let empty = try listing(try ctl(["assets", "--json", "--where", "pixelWidth > 100000"]))
            #expect(empty.records.isEmpty && empty.token == current)
            // Tables and the error list (errors are not in change sets) carry no token.
            #expect(!(try ctl(["assets"]).contains(#"{"token""#)))
            #expect(try ctl(["errors", "--json"]).isEmpty)

            // The recipe: snapshot, changes meanwhile, then watch from the snapshot's token.
            let snapshot = try listing(try ctl(["assets", "--json"]))
            let since = try #require(snapshot.token)
            #expect(snapshot.records.first { $0["id"]?.stringValue == p1 }?["isFavorite"] == .bool(true))
            #expect(!(try ctl(["favorite", p2]).isEmpty))
            try shell("cp", [spare("p4.jpg").string, lib("b/p4.jpg").string])
            try daemon.waitForAssets(4)
            let last = try daemon.currentToken()
            #expect(last >= since + 2)
            let watch = try WatchProcess(sock + ["watch", "--since", String(since), "--json"])
            try watch.waitFor("token \(last)") { (watch.tokens.last ?? -1) >= last }
            #expect(watch.tokens == Array(since + 1 ... last), "nothing missed, nothing repeated")
            #expect(watch.changeSets == (try daemon.call("changes.since", ["since": .int(Int64(since))])["changes"]?.arrayValue ?? []))
            #expect(watch.changeSets.first?["assets"]?["updated"] == [.string(p2)])
            #expect(watch.terminate() == 0)
        }
    }
}
