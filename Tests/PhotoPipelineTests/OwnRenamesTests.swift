@testable import PhotoPipeline
import PhotoModel
import PhotoWatch
import Testing

@Suite("photod's own renames in the watcher's reports")
struct OwnRenamesTests {
    @Test("Expected removals are taken out once each; a new file at the path ends its expectation; a minute later nothing is expected")
    func filter() {
        var own = OwnRenames()
        let t0 = ContinuousClock.now
        let (a, b, c): (PathBytes, PathBytes, PathBytes) = ("/l/a.jpg", "/l/b.jpg", "/l/c.jpg")
        own.expect(removed: [a, b], at: t0)
        #expect(own.filter([.removed(a), .movedOut(a), .removed(c), .added(c)], at: t0) == [.removed(c), .added(c)])
        // a's was taken: a user's deletion of a afterwards passes.
        #expect(own.filter([.removed(a)], at: t0) == [.removed(a)])
        // A restore's addition is not taken out (compared with the index, it changes nothing);
        // a trash coalesced with a new file there (a modification) passes and ends b's expectation.
        #expect(own.filter([.modified(b)], at: t0) == [.modified(b)])
        #expect(own.filter([.removed(b)], at: t0) == [.removed(b)])
        // Forgotten when not made, and after the window.
        own.expect(removed: [c], at: t0)
        own.forget(removed: [c])
        #expect(own.filter([.removed(c)], at: t0) == [.removed(c)])
        own.expect(removed: [c], at: t0)
        #expect(own.filter([.removed(c)], at: t0 + .seconds(61)) == [.removed(c)])
    }
}
