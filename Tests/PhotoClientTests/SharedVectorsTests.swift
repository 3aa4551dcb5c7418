import Foundation
import PhotoClient
import PhotoTesting
import Testing

/// One case of `Tests/Vectors/change-details.json`: what `ChangeDetails` computes for two fetch
/// results, which the Python client (clients/python) must compute identically.
struct ChangeDetailsVector: Codable, Equatable {
    struct Expected: Codable, Equatable {
        var hasIncrementalChanges: Bool
        var removed: [Int]
        var inserted: [Int]
        var changed: [Int]
        var changedBefore: [Int]
        /// `[from, to]` pairs, by `to`.
        var moves: [[Int]]
    }

    var seed: UInt64
    var before: [String]
    var after: [String]
    /// The change sets' updated ids, sorted (some in neither list).
    var updated: [String]
    var beforeToken: Int64
    var afterToken: Int64
    /// False: the after result is of another request (another collection).
    var sameRequest: Bool
    /// nil (absent from the file): the default limit, the after result's count.
    var maxIncrementalChanges: Int?
    var expected: Expected

    /// The case made from `seed` by the property test's generator, with the seed also choosing
    /// the tokens, the request and the limit, and the Swift client's answer.
    init(seed: UInt64) {
        let (before, after, updated) = randomCase(seed: seed)
        var rng = SplitMix64(seed: seed &+ 0x9E37_79B9)
        self.seed = seed
        self.before = before
        self.after = after
        self.updated = updated.sorted()
        beforeToken = 10
        afterToken = Int.random(in: 0..<20, using: &rng) == 0 ? 9 : 12
        sameRequest = Int.random(in: 0..<20, using: &rng) != 0
        maxIncrementalChanges = [nil, nil, Int.max, 3][Int.random(in: 0..<4, using: &rng)]
        let b = FetchResult(ids: before, token: beforeToken)
        let a = FetchResult(ids: after, token: afterToken,
                            request: sameRequest ? FetchRequest() : FetchRequest(collectionID: "s_favorites"))
        let d = ChangeDetails(from: b, to: a, updatedIDs: updated, maxIncrementalChanges: maxIncrementalChanges)
        expected = Expected(hasIncrementalChanges: d.hasIncrementalChanges, removed: d.removedIndexes,
                            inserted: d.insertedIndexes, changed: d.changedIndexes, changedBefore: d.changedIndexesBefore,
                            moves: d.moves.map { [$0.from, $0.to] })
    }

    static let seeds = UInt64(0)..<400
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/change-details.json")

    /// The file's text: one case a line, so that a change to the algorithm shows as the cases it moved.
    static func render(_ cases: [ChangeDetailsVector]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let lines = try cases.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        return "[\n" + lines.joined(separator: ",\n") + "\n]\n"
    }
}

@Suite("Shared test vectors")
struct SharedVectorsTests {
    @Test("Tests/Vectors/change-details.json is what ChangeDetails computes (PHOTOD_UPDATE_VECTORS=1 writes it anew)")
    func changeDetailsVectors() throws {
        let cases = ChangeDetailsVector.seeds.map(ChangeDetailsVector.init(seed:))
        let text = try ChangeDetailsVector.render(cases)
        if ProcessInfo.processInfo.environment["PHOTOD_UPDATE_VECTORS"] == "1" {
            try text.write(to: ChangeDetailsVector.file, atomically: true, encoding: .utf8)
        }
        let stored = try Data(contentsOf: ChangeDetailsVector.file)
        let decoded = try JSONDecoder().decode([ChangeDetailsVector].self, from: stored)
        #expect(decoded.count == cases.count)
        for (mine, theirs) in zip(cases, decoded) {
            #expect(mine == theirs, "seed \(mine.seed): run with PHOTOD_UPDATE_VECTORS=1 after changing the algorithm on purpose")
        }
        // The cases cover what the Python client must get right: reloads for each reason, moves, changes.
        #expect(cases.contains { !$0.expected.hasIncrementalChanges && !$0.sameRequest })
        #expect(cases.contains { !$0.expected.hasIncrementalChanges && $0.afterToken < $0.beforeToken })
        #expect(cases.contains { !$0.expected.hasIncrementalChanges && $0.maxIncrementalChanges == 3 && $0.sameRequest })
        #expect(cases.filter { $0.expected.moves.count > 2 }.count > 20)
        #expect(cases.filter { !$0.expected.changed.isEmpty }.count > 100)
        #expect(cases.contains { $0.before.isEmpty } && cases.contains { $0.after.isEmpty })
    }
}
