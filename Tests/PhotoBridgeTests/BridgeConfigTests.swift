import Foundation
@testable import PhotoBridge
import PhotoTesting
import Testing

@Suite("photod-nats: its newer options and its configuration file")
struct BridgeConfigTests {
    func parse(_ arguments: [String]) throws(BridgeOptions.ParseOutcome) -> BridgeOptions {
        try BridgeOptions.parse(arguments, environment: ["PHOTOD_SOCKET": "/run/test.sock"])
    }

    func usage(_ arguments: [String]) -> String? {
        do {
            _ = try parse(arguments)
            return nil
        } catch {
            if case .usage(let message) = error { return message }
            return nil
        }
    }

    @Test("The rpc options, --status and --json, their defaults and their checks")
    func options() throws {
        let defaults = try parse([])
        #expect(defaults.servers == "nats://127.0.0.1:4222" && defaults.stream == "PHOTOD" && !defaults.allowWrites)
        #expect(defaults.rpcWorkers == 4 && defaults.rpcTimeout == .seconds(30) && defaults.sockets.first?.string == "/run/test.sock")
        #expect(BridgeOptions.isValidName(defaults.name))
        let o = try parse(["--name", "nas-1", "--allow-writes", "--rpc-workers", "8", "--rpc-timeout", "5",
                           "--nats", "nats://a:4222,tls://b:4222"])
        #expect(o.name == "nas-1" && o.allowWrites && o.rpcWorkers == 8 && o.rpcTimeout == .seconds(5))
        #expect((o.changesSubject, o.resyncSubject, o.rpcSubject, o.statusSubject)
                == ("photod.nas-1.changes", "photod.nas-1.resync", "photod.nas-1.rpc", "photod.nas-1.bridge.status"))
        #expect(usage(["--name", "a.b"])?.contains("letters, digits") == true)
        #expect(usage(["--name", "*"]) != nil && usage(["--stream", "A>"]) != nil)
        #expect(usage(["--rpc-workers", "0"])?.contains("1...64") == true)
        #expect(usage(["--nats", "http://x"])?.contains("not a nats://") == true)
        #expect(usage(["--json"])?.contains("--status") == true)
        #expect(usage(["--frobnicate"])?.contains("unknown option") == true)
    }

    @Test("--config: photod.conf's syntax, allow-writes = yes|no, the command line wins, errors name the line")
    func configFile() throws {
        let dir = try TemporaryDirectory("bridge-config")
        defer { dir.remove() }
        let file = try dir.write("photod-nats.conf", Array("""
            # a comment
            nats = nats://bridge:s3cret@nats.lan:4222   # with a comment
            name = "home"
            allow-writes = yes
            rpc-workers = 2
            """.utf8))
        let o = try parse(["--config", file.string])
        #expect(o.servers == "nats://bridge:s3cret@nats.lan:4222" && o.name == "home" && o.allowWrites && o.rpcWorkers == 2)
        #expect(o.configFile == file.string)
        #expect(try parse(["--config", file.string, "--name", "other"]).name == "other")
        let no = try dir.write("no.conf", Array("allow-writes = no\n".utf8))
        #expect(try !parse(["--config", no.string]).allowWrites)
        let bad = try dir.write("bad.conf", Array("name = x\nallow-writes = maybe\n".utf8))
        #expect(usage(["--config", bad.string])?.contains("line 2: 'allow-writes' must be yes or no") == true)
        let unknown = try dir.write("unknown.conf", Array("nmae = x\n".utf8))
        #expect(usage(["--config", unknown.string])?.contains("line 1: unknown key 'nmae' (did you mean 'name'?)") == true)
        let twice = try dir.write("twice.conf", Array("name = a\nname = b\n".utf8))
        #expect(usage(["--config", twice.string])?.contains("given twice") == true)
        let invalid = try dir.write("invalid.conf", Array("name = a.b\n".utf8))
        #expect(usage(["--config", invalid.string])?.contains("--name must be") == true)
        #expect(usage(["--config", dir("missing.conf").string])?.contains("cannot read the configuration file") == true)
        #expect(usage(["--config", file.string, "--config", file.string])?.contains("once") == true)
        // The shipped file parses, and sets nothing: every line a comment.
        let shipped = try String(contentsOfFile: TestPaths.packageRoot.appendingPathComponent("systemd/photod-nats.conf").path, encoding: .utf8)
        let copy = try dir.write("shipped.conf", Array(shipped.utf8))
        let fromShipped = try parse(["--config", copy.string])
        #expect(fromShipped.servers == "nats://127.0.0.1:4222" && fromShipped.name == BridgeOptions.hostName())
        // Every option that takes a value is a key, and every key an option of --help.
        for key in BridgeOptions.configKeys {
            #expect(BridgeOptions.help.contains("--\(key.name)"), "\(key.name)")
        }
    }
}

@Suite("photod-nats's times")
struct BridgeTimeTests {
    @Test("A change set's commit time read, and the status's times written, as photod writes them")
    func roundTrip() throws {
        let text = "2026-11-29T16:06:52.020Z"
        let seconds = try #require(Bridge.commitTime(Array("\"\(text)\"".utf8)[...]))
        #expect(abs(seconds - 1_795_968_412.02) < 0.0005)
        #expect(Bridge.timestamp(seconds) == text)
        #expect(Bridge.commitTime(Array(text.utf8)[...]) == nil, "not a JSON string")
        #expect(Bridge.commitTime(Array("\"yesterday\"".utf8)[...]) == nil)
    }
}
