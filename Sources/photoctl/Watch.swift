import Glibc
import PhotoClient
import PhotoModel
import PhotoSystem
import PhotoWire

// `photoctl watch`: a subscriber that outlives photod's restarts. The cursor (a pure value)
// knows the last token printed; the shell below connects, subscribes after it, prints, and on a
// dropped connection reconnects to the same socket and subscribes after it again.

/// Where a watch is in the change stream: the last token printed, or the one it started from.
/// Resubscribing `since` it neither loses nor repeats a change set; a change set at or before
/// it (which a correct daemon never sends) is dropped rather than printed twice.
struct WatchCursor: Equatable {
    /// The token to resume after; nil until the first subscription says where "now" is.
    private(set) var token: Int64?

    init(since: Int64?) { token = since }

    /// photod accepted a subscription; `current` is its current token (where a subscription
    /// without `since` starts).
    mutating func subscribed(current: Int64) {
        if token == nil { token = current }
    }

    /// A change set arrived: true if it is to be printed (it is newer than the last one).
    mutating func receive(_ changeToken: Int64) -> Bool {
        if let token, changeToken <= token { return false }
        token = changeToken
        return true
    }

    /// The token expired: change sets were lost; the next subscription starts from now.
    mutating func expire() { token = nil }
}

/// The waits between reconnection attempts: 100 ms, doubling, at most 2 s.
struct Backoff {
    static let first: Duration = .milliseconds(100)
    static let limit: Duration = .seconds(2)
    private var next = Backoff.first

    /// The wait before the next attempt.
    mutating func step() -> Duration {
        defer { next = min(next * 2, Self.limit) }
        return next
    }

    mutating func reset() { next = Self.first }
}

/// SIGINT and SIGTERM end a watch with status 0: everything printed is already written
/// (each change set is flushed as it is printed), so exiting at once loses nothing. They are
/// unblocked too: a parent may have started photoctl with them blocked (the mask is inherited).
func exitOnStopSignals() {
    signal(SIGINT) { _ in _exit(0) }
    signal(SIGTERM) { _ in _exit(0) }
    var stops = sigset_t()
    sigemptyset(&stops)
    sigaddset(&stops, SIGINT)
    sigaddset(&stops, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &stops, nil)
}

func wait(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
}

func watch(_ args: [String], sockets: [PathBytes]) throws(Failure) {
    let a = try Arguments(args, flags: ["--json"], values: ["--since", "--in", "--media-type"], command: "watch")
    guard a.positional.isEmpty else { throw Failure(code: .usage, message: "watch takes no arguments") }
    var filter: JSONObject = [:]
    if let collection = a.values["--in"] { filter["collection"] = .string(collection) }
    if let type = a.values["--media-type"] {
        guard MediaType(rawValue: type) != nil else {
            throw Failure(code: .usage, message: "--media-type must be \(MediaType.allCases.map(\.rawValue).joined(separator: " or ")) (got '\(type)')")
        }
        filter["mediaType"] = .string(type)
    }
    guard filter.count <= 1 else { throw Failure(code: .usage, message: "give --in or --media-type, not both") }
    var cursor = WatchCursor(since: try a.int("--since", default: nil, range: 0...Int.max).map { Int64($0) })
    exitOnStopSignals()

    // The first connection may fall back to the system service's socket; reconnections go to
    // the same socket only (another daemon's tokens mean nothing here).
    var connection = try connect(sockets)
    let socket = connection.socket
    var backoff = Backoff()
    var subscribedOnce = false
    var reconnecting = false
    while true {
        do throws(ClientError) {
            connection.setTimeout(callTimeout)
            try subscribe(connection, filter: filter, cursor: &cursor)
            subscribedOnce = true
            if reconnecting {
                err("photoctl: reconnected (resuming after token \(cursor.token.map(String.init) ?? "?"))")
                reconnecting = false
            }
            backoff.reset()
            connection.setTimeout(nil)
            try follow(connection, json: a.json, cursor: &cursor)
            continue  // the token expired: subscribe again from now
        } catch {
            if !subscribedOnce {
                // The first subscription was refused: a mistake in the options, not an outage.
                if case .rpc(let e) = error { throw Failure(code: .failure, message: "changes.subscribe: \(error)", rpc: e) }
                throw Failure(code: .unavailable, message: "\(error)")
            }
            if !reconnecting {
                err("photoctl: reconnecting… (\(error))")
                reconnecting = true
            }
        }
        connection.close()
        while true {
            wait(backoff.step())
            if let fresh = try? PhotoConnection(socket: socket, timeout: callTimeout) {
                connection = fresh
                break
            }
        }
    }
}

/// Subscribes after the cursor's token; an expired one is reported and replaced by now.
private func subscribe(_ connection: PhotoConnection, filter: JSONObject, cursor: inout WatchCursor) throws(ClientError) {
    var params = filter
    if let token = cursor.token { params["since"] = .int(token) }
    let result: JSONValue
    do {
        result = try connection.call("changes.subscribe", params)
    } catch {
        guard case .rpc(let e) = error, e.errorCode == .tokenExpired else { throw error }
        reportExpired(token: cursor.token, detail: e.detail, current: e.data?["currentToken"]?.int64Value)
        cursor.expire()
        params["since"] = nil
        cursor.subscribed(current: try connection.call("changes.subscribe", params)["token"]?.int64Value ?? 0)
        return
    }
    cursor.subscribed(current: result["token"]?.int64Value ?? 0)
}

/// Prints change sets until the connection fails (throws) or the subscription expires (returns).
private func follow(_ connection: PhotoConnection, json: Bool, cursor: inout WatchCursor) throws(ClientError) {
    while true {
        let notification = try connection.nextNotification()
        switch notification.method {
        case "changes":
            guard let change = notification.params, let token = change["token"]?.int64Value else { continue }
            guard cursor.receive(token) else { continue }
            if json {
                out(change.jsonString)
            } else {
                printChangeSet(change, token: token)
            }
            standardOutput.flush()
        case "changes.expired":
            // photod pruned the journal under this subscriber and dropped the subscription.
            reportExpired(token: notification.params?["token"]?.int64Value ?? cursor.token, detail: nil,
                          current: notification.params?["currentToken"]?.int64Value)
            cursor.expire()
            return
        default:
            continue
        }
    }
}

private func reportExpired(token: Int64?, detail: String?, current: Int64?) {
    err("photoctl: change token \(token.map(String.init) ?? "?") has expired: "
        + (detail ?? "photod's change journal no longer holds what came after it")
        + ". Change sets were missed: refetch whatever you keep from photod. Continuing from the current token"
        + (current.map { " (\($0))." } ?? "."))
}

/// `token 123  2026-11-29T16:00:00Z  assets +2 ~1 -0  collections +0 ~3 -0`, then one id a line.
func printChangeSet(_ change: JSONValue, token: Int64) {
    func ids(_ group: String, _ kind: String) -> [String] {
        change[group]?[kind]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
    func counts(_ group: String) -> String {
        "\(group) +\(ids(group, "inserted").count) ~\(ids(group, "updated").count) -\(ids(group, "deleted").count)"
    }
    var time = change["time"]?.stringValue ?? "?"
    // Whole seconds are enough for people; --json keeps the milliseconds.
    if time.hasSuffix("Z"), let dot = time.firstIndex(of: ".") { time = String(time[..<dot]) + "Z" }
    var lines = ["token \(token)  \(time)  \(counts("assets"))  \(counts("collections"))"]
    for group in ["assets", "collections"] {
        for (kind, mark) in [("inserted", "+"), ("updated", "~"), ("deleted", "-")] {
            lines += ids(group, kind).map { "  \(mark) \($0)" }
        }
    }
    standardOutput.write(lines.joined(separator: "\n") + "\n")
}
