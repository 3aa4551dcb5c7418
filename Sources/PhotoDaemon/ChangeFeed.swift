import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWire

/// Publishes committed change sets to subscribed clients, in token order and without gaps.
///
/// A subscriber is either *catching up* — reading the journal after its last token, page by
/// page, on its own connection's queue, at the pace its socket drains — or *live*: each change
/// set is handed to it as it is committed. A subscriber that falls behind (a gap) goes back to
/// catching up; the journal has everything it missed. A client that does not read at all is cut
/// off by its connection's outbound limit and resumes later with its token.
final class ChangeFeed: Sendable {
    /// What a subscription asks for: everything, the change sets that touch one collection, or
    /// the assets of one media type.
    struct Filter: Sendable, Hashable {
        var collection: String?
        var mediaType: MediaType?

        static let none = Filter()
    }

    private struct Subscriber: Sendable {
        var sent: Int64
        var live: Bool
        var filter: Filter
    }

    private struct State: Sendable {
        /// The newest token handed to `publish`.
        var published: Int64
        var subscribers: [Int: Subscriber] = [:]
    }

    /// Change sets read from the journal per catch-up step.
    static let catchUpPage = 200
    /// A catching-up subscriber waits while more than this is unsent on its socket (a slow
    /// reader is never cut off for its own backlog; only live traffic it cannot take is).
    static let catchUpPendingBytes = 1 << 20

    let database: Database
    let logger: Logger
    private let state: Locked<State>
    private let connections = Locked<Callback<Int, ClientConnection?>?>(nil)

    init(database: Database, logger: Logger) throws {
        self.database = database
        self.logger = logger
        let bounds = try database.read { try $0.journalBounds() }
        state = Locked(State(published: bounds.current))
    }

    /// Where the feed finds connections (the socket server, once it exists).
    func attach(_ lookup: @escaping @Sendable (Int) -> ClientConnection?) {
        connections.withLock { $0 = Callback(lookup) }
    }

    private func connection(_ id: Int) -> ClientConnection? { connections.withLock { $0 }?(id) }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    // MARK: Subscriptions

    /// Subscribes a client from `since` (default: now); returns the current token. The
    /// response goes out before any notification (both on the client's queue, in order).
    func subscribe(client: Int, since: Int64?, filter: Filter) throws(RPCError) -> Int64 {
        let (bounds, known) = try journalBounds(resuming: since)
        let start = since ?? bounds.current
        try Self.check(start, against: bounds, known: known)
        state.withLock { $0.subscribers[client] = Subscriber(sent: start, live: false, filter: filter) }
        guard let conn = connection(client) else {
            unsubscribe(client: client)
            throw .internalError("the connection is gone")
        }
        logger.debug("subscribed", [("client.id", String(client)), ("since", String(start)), ("token", String(bounds.current))])
        conn.perform { [self] in catchUp(client) }
        return bounds.current
    }

    /// Ends a client's subscription; true if it had one.
    @discardableResult
    func unsubscribe(client: Int) -> Bool {
        state.withLock { $0.subscribers.removeValue(forKey: client) != nil }
    }

    func journalBounds() throws(RPCError) -> JournalBounds {
        try journalBounds(resuming: nil).bounds
    }

    /// The journal's bounds and whether `token` is one a client may resume from, on one snapshot.
    func journalBounds(resuming token: Int64?) throws(RPCError) -> (bounds: JournalBounds, known: Bool) {
        do {
            return try database.read { r in
                try r.consistent { () throws(StoreError) in
                    let bounds = try r.journalBounds()
                    return (bounds, try token.map { t throws(StoreError) in try r.resumable(t, in: bounds) } ?? true)
                }
            }
        } catch {
            throw .internalError("cannot read the change journal: \(error)")
        }
    }

    /// A token a client may resume from, or `tokenExpired` (pruned from the journal, newer
    /// than this database — a rebuilt one —, or taken back by a stop that was not clean:
    /// `known` false).
    static func check(_ token: Int64, against bounds: JournalBounds, known: Bool = true) throws(RPCError) {
        if token < bounds.floor {
            throw .tokenExpired(currentToken: bounds.current,
                                detail: "token \(token) is older than the change journal keeps (it starts after \(bounds.floor)); "
                                    + "refetch and resume from currentToken")
        }
        if token > bounds.current {
            throw .tokenExpired(currentToken: bounds.current,
                                detail: "token \(token) is newer than this database's \(bounds.current) (was the database "
                                    + "rebuilt?); refetch and resume from currentToken")
        }
        if !known {
            throw .tokenExpired(currentToken: bounds.current,
                                detail: "token \(token) names change sets a stop that was not clean (a power cut) took back; "
                                    + "refetch and resume from currentToken")
        }
    }

    /// `changes.since`: the change sets after `since` that pass the filter, at most `limit`
    /// examined; `token` is the last one examined (resume from it).
    func changes(since: Int64, filter: Filter, limit: Int) throws(RPCError) -> (token: Int64, changes: [ChangeSet], more: Bool) {
        let read: (JournalBounds, Bool, [ChangeSet])
        do {
            // The bounds and the rows from one snapshot: a pruning in between cannot open a gap.
            read = try database.read { r in
                try r.consistent { () throws(StoreError) in
                    let bounds = try r.journalBounds()
                    return (bounds, try r.resumable(since, in: bounds), try r.changes(after: since, limit: limit))
                }
            }
        } catch {
            throw .internalError("cannot read the change journal: \(error)")
        }
        let (bounds, known, rows) = read
        try Self.check(since, against: bounds, known: known)
        let token = rows.last?.token ?? since
        do {
            return (token, try rows.compactMap { try self.filtered($0, filter) }, token < bounds.current)
        } catch {
            throw .internalError("cannot filter the change journal: \(error)")
        }
    }

    // MARK: Publishing

    /// Called on the sort queue's thread after a commit: hands the change set to the live
    /// subscribers (encoding it once for those without a filter).
    func publish(_ change: ChangeSet) {
        guard let token = change.token else { return }  // nothing recorded: nothing to send
        var unfiltered: [UInt8]?
        let deliveries = state.withLock { s -> [(Int, Filter, Bool)] in
            s.published = max(s.published, token)
            var out: [(Int, Filter, Bool)] = []
            for (id, var sub) in s.subscribers where sub.live {
                if token <= sub.sent { continue }
                if token == sub.sent + 1 {
                    sub.sent = token
                    out.append((id, sub.filter, true))
                } else {
                    sub.live = false  // a gap: read it from the journal
                    out.append((id, sub.filter, false))
                }
                s.subscribers[id] = sub
            }
            return out
        }
        if !deliveries.isEmpty {
            logger.debug("published", [("token", String(token)), ("subscribers.direct", String(deliveries.filter(\.2).count)),
                                       ("subscribers.behind", String(deliveries.filter { !$0.2 }.count))])
        }
        for (id, filter, direct) in deliveries {
            guard let conn = connection(id) else {
                unsubscribe(client: id)
                continue
            }
            if !direct {
                conn.perform { [self] in catchUp(id) }
            } else if filter == .none {
                if unfiltered == nil { unfiltered = Self.notification(change) }
                let line = unfiltered!
                conn.perform { conn.enqueue(line) }
            } else {
                conn.perform { [self] in
                    // The media-type filter looks assets up: on the client's queue, not the writer's.
                    do {
                        if let kept = try filtered(change, filter) { conn.enqueue(Self.notification(kept)) }
                    } catch {
                        // Never a silent gap: the client loses its connection and resumes with
                        // its last token, which the journal still has.
                        logger.error("cannot filter change set \(token) for a subscriber; disconnecting it: \(error)",
                                     [("client.id", String(id))])
                        unsubscribe(client: id)
                        conn.close()
                    }
                }
            }
        }
    }

    /// Sends a subscriber what the journal holds after its last token, at the pace its socket
    /// drains, then makes it live. Runs on the client's queue.
    private func catchUp(_ client: Int) {
        guard let conn = connection(client), !conn.isClosed else {
            unsubscribe(client: client)
            return
        }
        while true {
            guard let sub = state.withLock({ $0.subscribers[client] }), !sub.live else { return }
            if conn.pendingOutboundBytes > Self.catchUpPendingBytes {
                conn.perform(after: .milliseconds(10)) { [self] in catchUp(client) }
                return
            }
            let rows: [ChangeSet]
            let resumable: Bool
            do {
                (rows, resumable) = try database.read { r in
                    try r.consistent { () throws(StoreError) in
                        (try r.changes(after: sub.sent, limit: Self.catchUpPage), try r.resumable(sub.sent, in: try r.journalBounds()))
                    }
                }
            } catch {
                logger.error("cannot read the change journal for a subscriber: \(error)", [("client.id", String(client))])
                conn.perform(after: .seconds(1)) { [self] in catchUp(client) }
                return
            }
            if rows.isEmpty {
                // Live once nothing newer has been published meanwhile; else read again.
                let live = state.withLock { s -> Bool in
                    guard var current = s.subscribers[client] else { return true }
                    guard s.published <= current.sent else { return false }
                    current.live = true
                    s.subscribers[client] = current
                    return true
                }
                if live {
                    logger.debug("subscriber live", [("client.id", String(client)), ("sent", String(sub.sent))])
                    return
                }
                continue
            }
            if let first = rows.first, first.token != sub.sent + 1, !resumable {
                // Pruned under a slow subscriber: it must refetch, then resume from the current token.
                // (Tokens an unclean stop skipped leave a gap after a token that is still resumable.)
                let current = (try? database.read { try $0.journalBounds() })?.current ?? rows.last?.token ?? sub.sent
                conn.enqueue(RPCNotification(method: "changes.expired", params: .object([
                    "token": .int(sub.sent), "currentToken": .int(current),
                ])).encodedLine())
                unsubscribe(client: client)
                return
            }
            let kept: [ChangeSet]
            do {
                kept = try rows.compactMap { try filtered($0, sub.filter) }
            } catch {
                // Nothing sent, nothing skipped: the same page again in a second.
                logger.error("cannot filter the change journal for a subscriber: \(error)", [("client.id", String(client))])
                conn.perform(after: .seconds(1)) { [self] in catchUp(client) }
                return
            }
            for change in kept { conn.enqueue(Self.notification(change)) }
            let last = rows.last!.token ?? 0
            logger.debug("subscriber caught up", [("client.id", String(client)), ("from", String(sub.sent)),
                                                  ("to", String(last)), ("sent", String(kept.count))])
            state.withLock { $0.subscribers[client]?.sent = last }
            if conn.isClosed {
                unsubscribe(client: client)
                return
            }
        }
    }

    /// The change set as a filter lets it through, or nil when nothing of it concerns the
    /// filter. A collection filter passes the change sets that name the collection (a member
    /// coming or going always updates it) whole; a media-type filter keeps the inserted and
    /// updated assets of that type (and every deleted id: a purged asset's type is gone).
    private func filtered(_ change: ChangeSet, _ filter: Filter) throws -> ChangeSet? {
        // The empty change set an unclean stop's skip leaves (`Database.skipUndoneTokens`).
        if change.isEmpty { return nil }
        if let collection = filter.collection, !change.collections.contains(collection) { return nil }
        guard let type = filter.mediaType else { return change }
        let ofType = try database.read { try $0.assetIDs((change.inserted + change.updated).map(\.rawValue), mediaType: type) }
        var kept = change
        kept.inserted = change.inserted.filter { ofType.contains($0.rawValue) }
        kept.updated = change.updated.filter { ofType.contains($0.rawValue) }
        if kept.inserted.isEmpty && kept.updated.isEmpty && kept.deleted.isEmpty { return nil }
        return kept
    }

    static func notification(_ change: ChangeSet) -> [UInt8] {
        RPCNotification(method: "changes", params: WireMapping.changeSet(change)).encodedLine()
    }
}
