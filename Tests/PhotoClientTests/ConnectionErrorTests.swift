#if canImport(Glibc)
import Glibc
#endif
import PhotoClient
import PhotoModel
import PhotoSystem
import Testing

@Suite("Connection errors")
struct ConnectionErrorTests {
    static func unreachable(_ path: String, _ errno: Int32) -> ClientError {
        .unreachable(socket: PathBytes(path), SystemError(call: "connect", errno: errno, context: path))
    }

    /// photoctl tries the per-user socket, then the system service's: a user who may not open
    /// the system's must hear that, not that the per-user one is missing.
    @Test("Of several sockets tried, a permission refusal is reported before a missing socket", arguments: [
        ([ENOENT, EACCES], 1), ([EACCES, ENOENT], 0), ([ENOENT, ECONNREFUSED], 0), ([ECONNREFUSED, EPERM], 1), ([ENOENT], 0),
    ])
    func mostTelling(_ errnos: [Int32], _ expected: Int) throws {
        let errors = errnos.enumerated().map { Self.unreachable("/s\($0.offset)", $0.element) }
        let chosen = try #require(ClientError.mostTelling(errors))
        guard case .unreachable(let socket, _) = chosen else {
            Issue.record("not unreachable: \(chosen)")
            return
        }
        #expect(socket == PathBytes("/s\(expected)"))
        #expect(chosen.isPermissionDenied == [EACCES, EPERM].contains(errnos[expected]))
    }

    @Test("Connecting to sockets that are all missing reports the first")
    func allMissing() throws {
        do {
            _ = try PhotoConnection.connect(anyOf: [PathBytes("/nonexistent/a.sock"), PathBytes("/nonexistent/b.sock")])
            Issue.record("connected to nothing")
        } catch {
            guard case .unreachable(let socket, let e) = error else { throw error }
            #expect(socket == PathBytes("/nonexistent/a.sock") && e.errno == ENOENT)
            #expect(!error.isPermissionDenied)
        }
        #expect(ClientError.mostTelling([]) == nil)
    }
}
