/// What changed between two fetch results of the same request (PhotoKit's
/// `PHFetchResultChangeDetails`): the indexes to remove, insert, reload and move to turn a view
/// of the old result into one of the new.
///
/// The indexes follow a collection view's batch updates: ``removedIndexes`` and a move's
/// `from` are positions in the result *before*; ``insertedIndexes``, ``changedIndexes`` and a
/// move's `to` are positions in the result *after*. Applied together — remove, insert, move —
/// they turn the old list into the new one; the objects neither removed nor moved keep their
/// relative order. The moves are as few as possible (the objects outside a longest run that
/// kept its order).
public struct ChangeDetails: Sendable, Hashable {
    /// One object that changed its place relative to the others.
    public struct Move: Sendable, Hashable, CustomStringConvertible {
        /// Its index in the result before.
        public var from: Int
        /// Its index in the result after.
        public var to: Int

        /// A move from `from` (before) to `to` (after).
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }

        /// `3→7`.
        public var description: String { "\(from)→\(to)" }
    }

    /// The result these details start from.
    public let fetchResultBeforeChanges: FetchResult
    /// The result after the changes: fetch it again to keep following changes.
    public let fetchResultAfterChanges: FetchResult
    /// False when the difference is not worth animating: the old token expired, the index was
    /// rebuilt, or the requests differ. Reload everything from ``fetchResultAfterChanges``; the
    /// index lists are then empty.
    public let hasIncrementalChanges: Bool
    /// Indexes, in the result before, of the objects no longer in it; ascending.
    public let removedIndexes: [Int]
    /// Indexes, in the result after, of the objects new to it; ascending.
    public let insertedIndexes: [Int]
    /// Indexes, in the result after, of the objects in both whose content changed; ascending.
    public let changedIndexes: [Int]
    /// The same changed objects by their indexes in the result *before*, ascending: for code
    /// that reloads cells before applying removals and insertions, so that it never has to
    /// translate between the two coordinate systems itself.
    public let changedIndexesBefore: [Int]
    /// The objects in both that changed place, by their index after, ascending.
    public let moves: [Move]

    /// The newest change these details cover: every change set up to this token is in them
    /// (the after result's token). Change sets with this token or an older one are covered.
    public var coveredThrough: Int64 { fetchResultAfterChanges.token }

    /// Whether any object moved.
    public var hasMoves: Bool { !moves.isEmpty }
    /// The ids of the removed objects, in their order before.
    public var removedIDs: [String] { removedIndexes.map { fetchResultBeforeChanges.ids[$0] } }
    /// The ids of the inserted objects, in their order after.
    public var insertedIDs: [String] { insertedIndexes.map { fetchResultAfterChanges.ids[$0] } }
    /// The ids of the changed objects, in their order after.
    public var changedIDs: [String] { changedIndexes.map { fetchResultAfterChanges.ids[$0] } }

    /// Calls `body` with each move's `from` (before) and `to` (after), by `to`.
    public func enumerateMoves<E: Error>(_ body: (_ from: Int, _ to: Int) throws(E) -> Void) throws(E) {
        for move in moves { try body(move.from, move.to) }
    }

    /// The difference between `before` and `after` (ids unique within each), where
    /// `updatedIDs` names the objects whose content changed (the change sets'
    /// `assetsUpdated`; ids of objects in neither result are ignored). Not incremental when
    /// the requests differ, `after` is older than `before` (a rebuilt index), or the edits
    /// would outnumber `maxIncrementalChanges` (default: the after result's count — more edits
    /// than reloading everything).
    public init(from before: FetchResult, to after: FetchResult, updatedIDs: some Sequence<String>,
                maxIncrementalChanges: Int? = nil) {
        guard before.request == after.request, after.token >= before.token else {
            self.init(before: before, after: after)
            return
        }
        let diff = Self.diff(before.ids, after.ids, updated: Set(updatedIDs))
        let edits = diff.removed.count + diff.inserted.count + diff.changed.count + diff.moves.count
        guard edits <= (maxIncrementalChanges ?? max(after.count, 1)) else {
            self.init(before: before, after: after)
            return
        }
        self.init(before: before, after: after, incremental: true, removed: diff.removed, inserted: diff.inserted,
                  changed: diff.changed, changedBefore: diff.changedBefore, moves: diff.moves)
    }

    /// The difference between `before` and `after`, with the objects `changes` updated
    /// marked changed.
    public init(from before: FetchResult, to after: FetchResult, changes: [ChangeSet], maxIncrementalChanges: Int? = nil) {
        self.init(from: before, to: after, updatedIDs: changes.lazy.flatMap(\.assetsUpdated), maxIncrementalChanges: maxIncrementalChanges)
    }

    /// Details that only say "reload": `after` replaces `before` wholesale.
    public static func reload(from before: FetchResult, to after: FetchResult) -> ChangeDetails {
        ChangeDetails(before: before, after: after)
    }

    private init(before: FetchResult, after: FetchResult, incremental: Bool = false, removed: [Int] = [], inserted: [Int] = [],
                 changed: [Int] = [], changedBefore: [Int] = [], moves: [Move] = []) {
        fetchResultBeforeChanges = before
        fetchResultAfterChanges = after
        hasIncrementalChanges = incremental
        removedIndexes = removed
        insertedIndexes = inserted
        changedIndexes = changed
        changedIndexesBefore = changedBefore
        self.moves = moves
    }

    /// The pure diff of two id lists: removed (before), inserted and changed (after), and the
    /// fewest moves — the common objects outside a longest increasing subsequence of their
    /// after-positions taken in before-order.
    static func diff(_ before: [String], _ after: [String], updated: Set<String>)
        -> (removed: [Int], inserted: [Int], changed: [Int], changedBefore: [Int], moves: [Move]) {
        var afterIndex: [String: Int] = [:]
        afterIndex.reserveCapacity(after.count)
        for (j, id) in after.enumerated() where afterIndex[id] == nil { afterIndex[id] = j }
        var removed: [Int] = []
        var changedBefore: [Int] = []
        var common: [(from: Int, to: Int)] = []
        var inBefore = Set<String>()
        inBefore.reserveCapacity(before.count)
        for (i, id) in before.enumerated() {
            inBefore.insert(id)
            if let j = afterIndex[id] {
                common.append((i, j))
                if updated.contains(id) { changedBefore.append(i) }
            } else {
                removed.append(i)
            }
        }
        var inserted: [Int] = []
        var changed: [Int] = []
        for (j, id) in after.enumerated() {
            if !inBefore.contains(id) {
                inserted.append(j)
            } else if updated.contains(id) {
                changed.append(j)
            }
        }
        let kept = longestIncreasingSubsequence(common.map(\.to))
        var moves: [Move] = []
        var k = 0
        for (n, pair) in common.enumerated() {
            if k < kept.count, kept[k] == n {
                k += 1
            } else {
                moves.append(Move(from: pair.from, to: pair.to))
            }
        }
        moves.sort { $0.to < $1.to }
        return (removed, inserted, changed, changedBefore, moves)
    }

    /// The positions (ascending) of one longest strictly increasing subsequence of `values`,
    /// in O(n log n) (patience sorting with back links).
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        // tails[l]: the position of the smallest value ending an increasing run of length l + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out: [Int] = []
        out.reserveCapacity(tails.count)
        var i = tails.last ?? -1
        while i >= 0 {
            out.append(i)
            i = previous[i]
        }
        return out.reversed()
    }
}
