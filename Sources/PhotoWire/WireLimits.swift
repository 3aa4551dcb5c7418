/// The protocol's named limits, in one place. `rpc.hello` reports them to clients, so a
/// client can size its requests without guessing.
public enum WireLimits {
    /// The protocol version `rpc.hello` announces. It changes only for incompatible changes;
    /// new methods and new result members are announced as capabilities instead.
    public static let protocolVersion = 1

    /// The longest request line the daemon reads, in bytes, without its `\n` (1 MiB). A
    /// longer line is discarded without being buffered and answered with an error (see
    /// ``LineFramer``); the connection stays usable.
    public static let maxLineBytes = 1 << 20

    /// The longest line a client should accept from the daemon (64 MiB). Responses are not
    /// bound by ``maxLineBytes``: a page of ``maxPageSize`` records with long, escaped paths
    /// can exceed 1 MiB, but stays far below this. Clients give their ``LineFramer`` this
    /// limit.
    public static let maxResponseLineBytes = 64 << 20

    /// The most records in one page of a paged result (`assets.fetch` and friends): a
    /// `limit` above this is an invalid-params error.
    public static let maxPageSize = 1000

    /// The most requests in one JSON-RPC batch. Every request in a batch produces its
    /// response at once, so an unbounded batch would bypass the per-client outbound queue's
    /// bound; a larger batch is rejected as a whole with an invalid-request error.
    public static let maxBatchCount = 100

    /// The deepest nesting of arrays and objects accepted in a request (the parser's
    /// ``JSONLimits/maxDepth``). No photod request needs more than a few levels.
    public static let maxJSONDepth = 64
}
