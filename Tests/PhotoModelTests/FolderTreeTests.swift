import PhotoModel
import PhotoTesting
import Testing

@Suite("Folder tree")
struct FolderTreeTests {
    static func album(_ path: String, _ count: Int) -> FolderAlbumInput {
        FolderAlbumInput(path: PathBytes(path), assetCount: count, albumID: "f:" + path)
    }

    static func id(_ path: String) -> String { FolderTree.listID(path: PathBytes(path)) }

    /// `path title parent=... lists=[...] albums=[...] n=albums/assets`, one line per list.
    static func render(_ lists: [CollectionList]) -> [String] {
        let paths = Dictionary(uniqueKeysWithValues: lists.map { ($0.id, $0.path.string) })
        return lists.map { l in
            "\(l.path) '\(l.title)' parent=\(l.parentID.map { paths[$0] ?? "?" } ?? "-") "
                + "lists=[\(l.listIDs.map { paths[$0] ?? "?" }.joined(separator: ","))] "
                + "albums=[\(l.albumIDs.joined(separator: ","))] n=\(l.albumCount)/\(l.assetCount)"
        }
    }

    @Test("FNV-1a 64 test vectors")
    func fnv() {
        #expect(FolderTree.fnv1a64([]) == 0xCBF2_9CE4_8422_2325)
        #expect(FolderTree.fnv1a64(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(FolderTree.fnv1a64(Array("foobar".utf8)) == 0x8594_4171_F739_67E8)
    }

    @Test("List ids: stable, path-derived, trailing slashes ignored")
    func ids() {
        let a = Self.id("/srv/photos/2019")
        #expect(a.count == 15 && a.hasPrefix("l_"))
        #expect(a.dropFirst(2).allSatisfy { "abcdefghijklmnopqrstuvwxyz234567".contains($0) })
        #expect(a == Self.id("/srv/photos/2019/"))
        #expect(a == Self.id("/srv/photos/2019//"))
        #expect(a != Self.id("/srv/photos/2018"))
        #expect(Self.id("/srv/photos/2019") == "l_" + Self.base32(FolderTree.fnv1a64(Array("/srv/photos/2019".utf8))))
        #expect(FolderTree.normalized("/") == "/")
        #expect(FolderTree.title(of: "/") == "/")
        #expect(FolderTree.title(of: "/srv/photos/") == "photos")
    }

    static func base32(_ h: UInt64) -> String {
        let alphabet = Array("234567abcdefghijklmnopqrstuvwxyz")  // AssetID's, in ASCII order
        return String((0..<13).reversed().map { alphabet[Int((h >> UInt64($0 * 5)) & 31)] })
    }

    @Test("Nested directories, siblings, intermediate lists, a directory both album and list")
    func nested() {
        let lists = FolderTree.build(roots: ["/srv/photos/"], albums: [
            Self.album("/srv/photos/2019/trip/day2", 2),
            Self.album("/srv/photos/2019/trip/day1", 3),
            Self.album("/srv/photos/2019", 1),
            Self.album("/srv/photos/misc", 4),
            Self.album("/srv/photos/a b/x", 1),
            Self.album("/srv/photos/a/x", 1),
        ])
        #expect(Self.render(lists) == [
            "/srv/photos 'photos' parent=- lists=[/srv/photos/2019,/srv/photos/a,/srv/photos/a b] "
                + "albums=[f:/srv/photos/2019,f:/srv/photos/misc] n=6/12",
            "/srv/photos/2019 '2019' parent=/srv/photos lists=[/srv/photos/2019/trip] albums=[] n=2/5",
            "/srv/photos/2019/trip 'trip' parent=/srv/photos/2019 lists=[] "
                + "albums=[f:/srv/photos/2019/trip/day1,f:/srv/photos/2019/trip/day2] n=2/5",
            "/srv/photos/a 'a' parent=/srv/photos lists=[] albums=[f:/srv/photos/a/x] n=1/1",
            "/srv/photos/a b 'a b' parent=/srv/photos lists=[] albums=[f:/srv/photos/a b/x] n=1/1",
        ])
        #expect(lists.allSatisfy { $0.root == "/srv/photos" })
        #expect(lists.map(\.id) == lists.map { Self.id($0.path.string) })
    }

    @Test("Empty branches are not listed; an empty root still is")
    func empty() {
        #expect(Self.render(FolderTree.build(roots: ["/srv/photos"], albums: [])) == [
            "/srv/photos 'photos' parent=- lists=[] albums=[] n=0/0",
        ])
        // A deep album makes every directory above it a list, and nothing else.
        #expect(Self.render(FolderTree.build(roots: ["/p"], albums: [Self.album("/p/a/b/c", 7)])) == [
            "/p 'p' parent=- lists=[/p/a] albums=[] n=1/7",
            "/p/a 'a' parent=/p lists=[/p/a/b] albums=[] n=1/7",
            "/p/a/b 'b' parent=/p/a lists=[] albums=[f:/p/a/b/c] n=1/7",
        ])
    }

    @Test("Multiple roots, nested roots, an album under no root, a root that is an album")
    func roots() {
        let lists = FolderTree.build(roots: ["/mnt/nas/photos", "/home/ann/Pictures", "/mnt/nas/photos/phone", "/"],
                                     albums: [
            Self.album("/mnt/nas/photos", 2),
            Self.album("/mnt/nas/photos/phone/DCIM", 5),
            Self.album("/mnt/nas/photos/2020", 1),
            Self.album("/home/ann/Pictures/Screenshots", 3),
            Self.album("/home/bob/x", 9),
        ])
        #expect(Self.render(lists) == [
            "/ '/' parent=- lists=[/home] albums=[] n=1/9",
            "/home 'home' parent=/ lists=[/home/bob] albums=[] n=1/9",
            "/home/ann/Pictures 'Pictures' parent=- lists=[] albums=[f:/home/ann/Pictures/Screenshots] n=1/3",
            "/home/bob 'bob' parent=/home lists=[] albums=[f:/home/bob/x] n=1/9",
            "/mnt/nas/photos 'photos' parent=- lists=[] albums=[f:/mnt/nas/photos,f:/mnt/nas/photos/2020] n=2/3",
            "/mnt/nas/photos/phone 'phone' parent=- lists=[] albums=[f:/mnt/nas/photos/phone/DCIM] n=1/5",
        ])
        // Without the catch-all root, an album under no root is left out.
        let noCatchAll = FolderTree.build(roots: ["/mnt/nas/photos"], albums: [Self.album("/home/bob/x", 9)])
        #expect(Self.render(noCatchAll) == ["/mnt/nas/photos 'photos' parent=- lists=[] albums=[] n=0/0"])
        #expect(FolderTree.root(of: "/mnt/nas/photos/phone/DCIM", roots: ["/mnt/nas/photos", "/mnt/nas/photos/phone/"])
                == "/mnt/nas/photos/phone")
        #expect(FolderTree.listPaths(ofAlbumAt: "/r/a/b", root: "/r/") == ["/r/a", "/r"])
        #expect(FolderTree.listPaths(ofAlbumAt: "/r", root: "/r") == ["/r"])
        #expect(FolderTree.listPaths(ofAlbumAt: "/r/a", root: "/r") == ["/r"])
    }

    @Test("Names that are not UTF-8 keep their bytes and get distinct ids")
    func nonUTF8() throws {
        let a = PathBytes([0x2F, 0x72, 0x2F, 0xFF, 0x2F, 0x78])  // /r/\xFF/x
        let b = PathBytes([0x2F, 0x72, 0x2F, 0xFE, 0x2F, 0x78])  // /r/\xFE/x
        let lists = FolderTree.build(roots: ["/r"], albums: [
            FolderAlbumInput(path: a, assetCount: 1, albumID: "fa"), FolderAlbumInput(path: b, assetCount: 2, albumID: "fb"),
        ])
        #expect(lists.count == 3)
        #expect(lists.map(\.path.bytes) == [[0x2F, 0x72], [0x2F, 0x72, 0x2F, 0xFE], [0x2F, 0x72, 0x2F, 0xFF]])
        #expect(lists[1].title == "\u{FFFD}" && lists[2].title == "\u{FFFD}")
        #expect(lists[1].id != lists[2].id)
        #expect(lists[0].listIDs == [lists[1].id, lists[2].id])
        #expect(lists[1].albumIDs == ["fb"] && lists[2].albumIDs == ["fa"])
    }

    @Test("Diff between two builds")
    func diff() {
        let old = FolderTree.build(roots: ["/r"], albums: [Self.album("/r/a/x", 1), Self.album("/r/b/y", 1)])
        let new = FolderTree.build(roots: ["/r"], albums: [Self.album("/r/a/x", 2), Self.album("/r/c/z", 1)])
        let d = FolderTree.diff(old: old, new: new)
        #expect(d.inserted == [Self.id("/r/c")])
        #expect(d.updated == [Self.id("/r"), Self.id("/r/a")])
        #expect(d.deleted == [Self.id("/r/b")])
        #expect(FolderTree.diff(old: new, new: new) == ([], [], []))
    }

    @Test("The same input in any order builds the same tree")
    func orderIndependent() {
        var g = SplitMix64(seed: 7)
        var albums: [FolderAlbumInput] = []
        for n in 0..<200 {
            let depth = Int.random(in: 1...4, using: &g)
            let path = "/lib" + (0..<depth).map { _ in "/" + ["a", "b", "c", "a b", "\u{E9}"].randomElement(using: &g)! }.joined()
            albums.append(FolderAlbumInput(path: PathBytes(path), assetCount: n % 7 + 1, albumID: "f\(n)"))
        }
        // Distinct paths only: one album per directory.
        var seen = Set<PathBytes>()
        albums = albums.filter { seen.insert($0.path).inserted }
        let lists = FolderTree.build(roots: ["/lib"], albums: albums)
        #expect(FolderTree.build(roots: ["/lib"], albums: albums.shuffled(using: &g)) == lists)
        #expect(FolderTree.build(roots: ["/lib/"], albums: albums.reversed()) == lists)
        // Counts add up: the root counts every album; each list counts its albums and nested lists'.
        let byID = Dictionary(uniqueKeysWithValues: lists.map { ($0.id, $0) })
        let counts = Dictionary(uniqueKeysWithValues: albums.map { ($0.albumID, $0.assetCount) })
        #expect(lists[0].albumCount == albums.count)
        for l in lists {
            #expect(l.albumCount == l.albumIDs.count + l.listIDs.map { byID[$0]!.albumCount }.reduce(0, +))
            #expect(l.assetCount == l.albumIDs.map { counts[$0]! }.reduce(0, +) + l.listIDs.map { byID[$0]!.assetCount }.reduce(0, +))
            #expect(l.listIDs.allSatisfy { byID[$0]!.parentID == l.id })
        }
    }
}
