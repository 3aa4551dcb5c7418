@testable import PhotoBridge
@testable import PhotoDaemon
import Testing

/// photod-nats decides by name which of photod's methods a request over NATS may call: its lists
/// must be photod's, or a new write would pass as a read.
@Suite("photod-nats's method policy against photod's methods")
struct BridgePolicyTests {
    @Test("The bridge's writes are exactly photod's writes, and its lists cover every method photod has")
    func lists() {
        #expect(RPCPolicy.writes == Set(Methods.writeNames))
        #expect(RPCPolicy.reads.isDisjoint(with: RPCPolicy.writes))
        #expect(RPCPolicy.reads.union(RPCPolicy.writes).union(RPCPolicy.connectionBound.keys) == Set(Methods.names))
        for name in Methods.writeNames {
            #expect(RPCPolicy.verdict(name, allowWrites: false, name: "x") != .read, "\(name)")
        }
    }
}
