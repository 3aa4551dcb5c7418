import PhotoModel
import Testing

@Suite("Trashed names")
struct TrashNameTests {
    @Test("A trashed name carries the expiry and the original name, and reads back")
    func roundTrip() throws {
        let made = try #require(TrashName.make(Array("IMG_0001.JPG".utf8), expiresAt: 1_767_225_600))
        #expect(String(decoding: made, as: UTF8.self) == ".photod-trashed-1767225600-IMG_0001.JPG")
        let parsed = try #require(TrashName.parse(made))
        #expect(parsed.original == Array("IMG_0001.JPG".utf8))
        #expect(parsed.expiresAt == 1_767_225_600)
        // Names with dashes and dots of their own survive.
        let odd = Array("-x-.2020-01-01.tar.jpg".utf8)
        #expect(TrashName.parse(try #require(TrashName.make(odd, expiresAt: 5)))?.original == odd)
    }

    @Test("Other dot names, Android MediaStore's trash (.trashed-…: photod never adopts nor deletes files it did not trash), and trashed-looking names without an expiry or a name, are not trashed names")
    func notTrashed() {
        for name in [".photod-trashed-", ".photod-trashed--a.jpg", ".photod-trashed-12a-b.jpg", ".photod-trashed-123-", "trashed-1-a.jpg", ".hidden.jpg",
                     ".photod-trashed-1-.", ".photod-trashed-1-..", ".photod-trashed-1234567890123456789-a.jpg",
                     ".trashed-1767225600-IMG_0001.JPG"] {
            #expect(TrashName.parse(Array(name.utf8)) == nil, "\(name)")
        }
    }

    @Test("A name too long to take the prefix is refused, not cut")
    func tooLong() {
        #expect(TrashName.make([UInt8](repeating: UInt8(ascii: "a"), count: 240), expiresAt: 1_767_225_600) == nil)
        #expect(TrashName.make([UInt8](repeating: UInt8(ascii: "a"), count: 228), expiresAt: 1_767_225_600)?.count == 255)
    }

    @Test("A restored name's suffix goes after the base name, so an asset's files stay paired")
    func suffix() {
        func s(_ name: String, _ base: Int, _ n: Int) -> String {
            String(decoding: TrashName.suffixed(Array(name.utf8), baseLength: base, n), as: UTF8.self)
        }
        #expect(s("IMG_1.CR2", 5, 1) == "IMG_1 (1).CR2")
        #expect(s("IMG_1.JPG.xmp", 5, 2) == "IMG_1 (2).JPG.xmp")
        #expect(s("README", 6, 3) == "README (3)")
    }
}
