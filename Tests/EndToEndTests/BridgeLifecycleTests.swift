import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// photod-nats's parts (watchdog, request/reply server, publisher) are services in one group:
/// SIGTERM stops them in reverse order, and the bridge exits 0 — while it publishes, while it
/// waits for a NATS server that is away, and serving requests only (issue 29).
@Suite("photod-nats stops its parts", .serialized)
struct BridgeLifecycleTests {
    /// SIGTERM, then the exit status, within `timeout`.
    static func terminate(_ bridge: BridgeProcess, timeout: Duration = .seconds(10)) throws -> Int32 {
        bridge.process.terminate()
        try eventually("photod-nats to stop; its log:\n\(bridge.log)", timeout: timeout) { !bridge.process.isRunning }
        return bridge.process.terminationStatus
    }

    @Test("SIGTERM while publishing, while NATS is away, and with --rpc-only: the parts stop and the bridge exits 0",
          .enabled(if: NATSServerProcess.available, "nats-server is not installed (scripts/install-deps --tests installs it)"))
    func sigtermStopsTheParts() throws {
        let lib = try TemporaryDirectory("nats-stop-lib")
        defer { lib.remove() }
        let state = try TemporaryDirectory("nats-stop-state")
        defer { state.remove() }
        let store = try TemporaryDirectory("nats-stop-store")
        defer { store.remove() }
        try lib.write("a/1.jpg", Library.jpeg(date: "2021:01:01 10:00:00"))
        let server = try NATSServerProcess(store: store)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        defer { _ = daemon.stop() }
        try daemon.waitForIdle()

        // Publishing: subscribed to photod, blocked reading its socket.
        let publishing = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-stop", state: state)
        try publishing.waitSubscribed()
        try publishing.waitServing()
        #expect(try Self.terminate(publishing) == 0, "\(publishing.log)")

        // NATS away: the publisher and the request/reply server wait between retries.
        let nowhere = "nats://127.0.0.1:\(try NATSServerProcess.freePort())"
        let waiting = try BridgeProcess(socket: daemon.socket, nats: nowhere, name: "box-stop", state: state)
        try eventually("the bridge to say it cannot connect:\n\(waiting.log)", timeout: .seconds(10)) { waiting.log.contains("cannot connect to NATS") }
        #expect(try Self.terminate(waiting) == 0, "\(waiting.log)")

        // Serving requests only.
        let serving = try BridgeProcess(socket: daemon.socket, nats: server.url, name: "box-stop", state: state,
                                        arguments: ["--rpc-only"])
        try serving.waitServing()
        #expect(try Self.terminate(serving) == 0, "\(serving.log)")
    }
}
