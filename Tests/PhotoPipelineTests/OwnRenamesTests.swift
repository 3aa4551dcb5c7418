@testable import PhotoPipeline
import PhotoModel
import PhotoWatch
import Testing

@Suite("photod's own renames in the watcher's reports")
struct OwnRenamesTests {
    @Test("Expected reports are taken out once each; others, and the same paths' later reports, pass; a minute later nothing is expected")
    func filter() {
        var own = OwnRenames()
        let t0 = ContinuousClock.now
        let (a, b, c): (PathBytes, PathBytes, PathBytes) = ("/l/a.jpg", "/l/b.jpg", "/l/c.jpg")
        own.expect(removed: [a, b], added: [], at: t0)
        #expect(own.filter([.removed(a), .movedOut(a), .removed(c), .added(b)], at: t0) == [.removed(c), .added(b)])
        // b's removal is still expected; a's was taken: a user's deletion of a afterwards passes.
        #expect(own.filter([.removed(a), .removed(b)], at: t0) == [.removed(a)])
        // A trash and its restore in one batch come as a modification of the same path.
        own.expect(removed: [c], added: [c], at: t0)
        #expect(own.filter([.modified(c)], at: t0) == [])
        // Forgotten when not made, and after the window.
        own.expect(removed: [a], added: [b], at: t0)
        own.forget(removed: [a], added: [])
        #expect(own.filter([.removed(a)], at: t0) == [.removed(a)])
        #expect(own.filter([.added(b)], at: t0 + .seconds(61)) == [.added(b)])
    }
}
