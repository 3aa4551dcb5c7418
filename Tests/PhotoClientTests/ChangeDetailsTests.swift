import PhotoClient
import PhotoTesting
import Testing

/// Applies details the way a collection view's batch update does: the removed go, the
/// inserted take their places after, each moved object goes from its place before to its
/// place after, and the rest fill the remaining places in their old order.
func applyBatch(_ d: ChangeDetails, insertedObjects: (Int) -> String) -> [String]? {
    let before = d.fetchResultBeforeChanges.ids
    let count = before.count - d.removedIndexes.count + d.insertedIndexes.count
    guard count >= 0 else { return nil }
    var slots = [String?](repeating: nil, count: count)
    for i in d.insertedIndexes {
        guard slots.indices.contains(i), slots[i] == nil else { return nil }
        slots[i] = insertedObjects(i)
    }
    var leaving = Set(d.removedIndexes)
    var movesSeen = 0
    var failed = false
    d.enumerateMoves { from, to in
        movesSeen += 1
        guard slots.indices.contains(to), slots[to] == nil, before.indices.contains(from), !leaving.contains(from) else {
            failed = true
            return
        }
        slots[to] = before[from]
        leaving.insert(from)
    }
    guard !failed, movesSeen == d.moves.count else { return nil }
    var staying = before.indices.filter { !leaving.contains($0) }.map { before[$0] }[...]
    for i in slots.indices where slots[i] == nil {
        guard let next = staying.popFirst() else { return nil }
        slots[i] = next
    }
    guard staying.isEmpty else { return nil }
    return slots.map { $0! }
}

/// The length of a longest strictly increasing subsequence, the quadratic way.
func lisLength(_ values: [Int]) -> Int {
    var best = [Int](repeating: 1, count: values.count)
    for i in values.indices {
        for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return best.max() ?? 0
}

/// A random before list and an after list made from it by removals, moves, inserts and
/// sometimes a whole shuffle; plus a random set of updated ids.
func randomCase(seed: UInt64) -> (before: [String], after: [String], updated: Set<String>) {
    var rng = SplitMix64(seed: seed)
    let n = Int.random(in: 0...40, using: &rng)
    let before = (0..<n).map { "a_\($0)" }.shuffled(using: &rng)
    var after = before.filter { _ in Int.random(in: 0..<4, using: &rng) != 0 }
    switch Int.random(in: 0..<4, using: &rng) {
    case 0:
        after.shuffle(using: &rng)
    case 1:
        break
    default:
        for _ in 0..<Int.random(in: 0...5, using: &rng) where after.count > 1 {
            let id = after.remove(at: Int.random(in: 0..<after.count, using: &rng))
            after.insert(id, at: Int.random(in: 0...after.count, using: &rng))
        }
    }
    for k in 0..<Int.random(in: 0...8, using: &rng) {
        after.insert("a_new\(k)", at: Int.random(in: 0...after.count, using: &rng))
    }
    let updated = Set((before + after).filter { _ in Int.random(in: 0..<3, using: &rng) == 0 } + ["a_elsewhere"])
    return (before, after, updated)
}

@Suite("Change details")
struct ChangeDetailsTests {
    @Test("Random before/after lists (2,000 seeds): removals, insertions and moves turn before into after; indexes consistent; moves minimal")
    func property() throws {
        for seed in UInt64(0)..<2_000 {
            let (beforeIDs, afterIDs, updated) = randomCase(seed: seed)
            let before = FetchResult(ids: beforeIDs, token: 10)
            let after = FetchResult(ids: afterIDs, token: 12)
            let d = ChangeDetails(from: before, to: after, updatedIDs: updated, maxIncrementalChanges: .max)
            #expect(d.hasIncrementalChanges, "seed \(seed)")
            let inBefore = Set(beforeIDs), inAfter = Set(afterIDs)

            // Applied together, the details rebuild the after list.
            let rebuilt = applyBatch(d) { afterIDs[$0] }
            #expect(rebuilt == afterIDs, "seed \(seed): \(beforeIDs) → \(afterIDs) with \(d)")

            // Removed: ascending indexes before, exactly the ids not after.
            #expect(d.removedIndexes == d.removedIndexes.sorted() && Set(d.removedIndexes).count == d.removedIndexes.count, "seed \(seed)")
            #expect(Set(d.removedIDs) == inBefore.subtracting(inAfter), "seed \(seed)")
            // Inserted: ascending indexes after, exactly the ids not before.
            #expect(d.insertedIndexes == d.insertedIndexes.sorted(), "seed \(seed)")
            #expect(Set(d.insertedIDs) == inAfter.subtracting(inBefore), "seed \(seed)")
            // Changed: indexes after of the updated ids in both.
            #expect(d.changedIndexes == d.changedIndexes.sorted(), "seed \(seed)")
            #expect(Set(d.changedIDs) == inBefore.intersection(inAfter).intersection(updated), "seed \(seed)")
            // The same objects in the old coordinates.
            #expect(d.changedIndexesBefore == d.changedIndexesBefore.sorted(), "seed \(seed)")
            #expect(Set(d.changedIndexesBefore.map { beforeIDs[$0] }) == Set(d.changedIDs), "seed \(seed)")
            // Without the override, details are incremental exactly when the edits do not outnumber the result.
            let plain = ChangeDetails(from: before, to: after, updatedIDs: updated)
            let edits = d.removedIndexes.count + d.insertedIndexes.count + d.changedIndexes.count + d.moves.count
            #expect(plain.hasIncrementalChanges == (edits <= max(afterIDs.count, 1)), "seed \(seed)")
            // Each move names the same object at both ends, objects in both, by `to`.
            for m in d.moves {
                #expect(beforeIDs[m.from] == afterIDs[m.to], "seed \(seed): move \(m)")
            }
            #expect(d.moves.map(\.to) == d.moves.map(\.to).sorted(), "seed \(seed)")
            #expect(d.hasMoves == !d.moves.isEmpty)
            // As few moves as can be: every common object outside one longest run that kept its order.
            let afterIndex = Dictionary(uniqueKeysWithValues: afterIDs.enumerated().map { ($1, $0) })
            let commonPositions = beforeIDs.compactMap { afterIndex[$0] }
            #expect(d.moves.count == commonPositions.count - lisLength(commonPositions), "seed \(seed)")
        }
    }

    @Test("Small cases by hand")
    func table() {
        typealias Move = ChangeDetails.Move
        let cases: [(before: [String], after: [String], removed: [Int], inserted: [Int], moves: [Move])] = [
            (["a", "b", "c"], ["a", "b", "c"], [], [], []),
            (["a", "b", "c"], ["c", "a", "b"], [], [], [Move(from: 2, to: 0)]),
            (["a", "b", "c"], ["b", "c", "a"], [], [], [Move(from: 0, to: 2)]),
            (["a", "b", "c", "d"], ["a", "x", "c", "b"], [3], [1], [Move(from: 1, to: 3)]),
            ([], ["x", "y"], [], [0, 1], []),
            (["a", "b"], [], [0, 1], [], []),
        ]
        for c in cases {
            let d = ChangeDetails(from: FetchResult(ids: c.before, token: 1), to: FetchResult(ids: c.after, token: 2),
                                  updatedIDs: [String](), maxIncrementalChanges: .max)
            #expect(d.removedIndexes == c.removed, "\(c.before) → \(c.after)")
            #expect(d.insertedIndexes == c.inserted, "\(c.before) → \(c.after)")
            #expect(d.moves == c.moves, "\(c.before) → \(c.after)")
            #expect(d.changedIndexes.isEmpty)
        }
    }

    @Test("A reversed list moves all but one; changed indexes are positions after, moved or not")
    func reversal() {
        let d = ChangeDetails(from: FetchResult(ids: ["a", "b", "c", "d"], token: 1), to: FetchResult(ids: ["d", "c", "b", "a"], token: 2),
                              changes: [ChangeSet(token: 2, assetsUpdated: ["a", "c", "zz"])], maxIncrementalChanges: .max)
        #expect(d.moves.count == 3)
        #expect(d.changedIndexes == [1, 3])
        #expect(d.changedIndexesBefore == [0, 2])
        // Five edits for four objects: by default, a reload is cheaper.
        #expect(!ChangeDetails(from: d.fetchResultBeforeChanges, to: d.fetchResultAfterChanges, changes: [ChangeSet(token: 2, assetsUpdated: ["a", "c"])])
            .hasIncrementalChanges)
        var seen: [ChangeDetails.Move] = []
        d.enumerateMoves { seen.append(ChangeDetails.Move(from: $0, to: $1)) }
        #expect(seen == d.moves)
    }

    @Test("Not incremental: another request, or an older token (a rebuilt index); reload details")
    func notIncremental() {
        let before = FetchResult(ids: ["a", "b"], token: 5)
        let other = FetchResult(ids: ["b"], token: 6, request: FetchRequest(collectionID: "s_favorites"))
        let older = FetchResult(ids: ["b"], token: 4)
        for after in [other, older] {
            let d = ChangeDetails(from: before, to: after, updatedIDs: ["b"])
            #expect(!d.hasIncrementalChanges)
            #expect(d.removedIndexes.isEmpty && d.insertedIndexes.isEmpty && d.changedIndexes.isEmpty && d.moves.isEmpty)
            #expect(d.fetchResultAfterChanges == after)
        }
        let reload = ChangeDetails.reload(from: before, to: FetchResult(ids: ["b"], token: 9))
        #expect(!reload.hasIncrementalChanges)
        #expect(reload.fetchResultAfterChanges.ids == ["b"])
    }
}
