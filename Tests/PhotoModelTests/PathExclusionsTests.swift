import PhotoModel
import Testing

@Suite("Exclusion patterns: globs over the path below a root")
struct PathExclusionsTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var pattern: String
        var path: String
        var excluded: Bool
        var testDescription: String { "\(pattern) \(excluded ? "excludes" : "keeps") \(path)" }
    }

    static let rows: [Row] = [
        Row(pattern: "@eaDir", path: "@eaDir", excluded: true),
        Row(pattern: "@eaDir", path: "2024/trip/@eaDir/IMG_1.JPG/SYNOPHOTO_THUMB_XL.jpg", excluded: true),
        Row(pattern: "@eaDir", path: "2024/my@eaDir/a.jpg", excluded: false),
        Row(pattern: "._*", path: "2024/._IMG_1.JPG", excluded: true),
        Row(pattern: "._*", path: "2024/IMG_._1.JPG", excluded: false),
        Row(pattern: "**/@eaDir/**", path: "a/@eaDir", excluded: true),
        Row(pattern: "**/@eaDir/**", path: "a/@eaDir/b/c.jpg", excluded: true),
        Row(pattern: "*.tmp", path: "a/b/c.tmp", excluded: true),
        Row(pattern: "*.tmp", path: "a/b/c.tmp.jpg", excluded: false),
        Row(pattern: "/Scans", path: "Scans/a.jpg", excluded: true),
        Row(pattern: "/Scans", path: "old/Scans/a.jpg", excluded: false),
        Row(pattern: "2019/*/raw", path: "2019/june/raw/a.nef", excluded: true),
        Row(pattern: "2019/*/raw", path: "2019/june/x/raw/a.nef", excluded: false),
        Row(pattern: "2019/**/raw", path: "2019/june/x/raw/a.nef", excluded: true),
        Row(pattern: "2019/**/raw", path: "2019/raw", excluded: true),
        Row(pattern: "IMG_00[0-4]?.JPG", path: "d/IMG_0042.JPG", excluded: true),
        Row(pattern: "IMG_00[0-4]?.JPG", path: "d/IMG_0052.JPG", excluded: false),
        Row(pattern: "[!a]*", path: "abc", excluded: false),
        Row(pattern: "[!a]*", path: "bcd", excluded: true),
        Row(pattern: "\\*", path: "*", excluded: true),
        Row(pattern: "\\*", path: "x", excluded: false),
        Row(pattern: "a*b*c", path: "aXbYbZc", excluded: true),
        Row(pattern: "a*b*c", path: "aXbYbZ", excluded: false),
        Row(pattern: "$RECYCLE.BIN", path: "$RECYCLE.BIN/S-1-5/a.jpg", excluded: true),
        Row(pattern: "System Volume Information", path: "System Volume Information/x.jpg", excluded: true),
    ]

    @Test(arguments: rows) func matches(row: Row) throws {
        let exclusions = try PathExclusions(patterns: [row.pattern], defaults: false)
        #expect(exclusions.excludes(PathBytes("/lib/" + row.path), below: "/lib") == row.excluded)
    }

    @Test func theDefaultsCoverWhatNASSystemsAndOperatingSystemsMake() throws {
        let defaults = try PathExclusions(patterns: [])
        for path in ["@eaDir/a.jpg", "x/#recycle/a.jpg", "#snapshot/GMT+01_2024/a.jpg", "@Recycle/a.jpg",
                     "@Recently-Snapshot/a.jpg", "y/.@__thumb/a.jpg", "$RECYCLE.BIN/a.jpg", "System Volume Information/a.jpg",
                     "d/._IMG_1.JPG", ".zfs/snapshot/a.jpg", "lost+found/#1234", "Thumbs.db"] {
            #expect(defaults.excludes(PathBytes("/lib/" + path), below: "/lib"), "\(path)")
        }
        #expect(!defaults.excludes("/lib/2024/IMG_1.JPG", below: "/lib"))
        #expect(try PathExclusions(patterns: [], defaults: false).isEmpty)
        #expect(try PathExclusions(patterns: ["x"], defaults: true).patterns == PathExclusions.defaultPatterns + ["x"])
    }

    @Test func theRootAndPathsOutsideItAreNeverExcluded() throws {
        let e = try PathExclusions(patterns: ["lib", "*"], defaults: false)
        #expect(!e.excludes("/srv/lib", below: "/srv/lib"))
        #expect(!e.excludes("/elsewhere/a", below: "/srv/lib"))
        #expect(e.excludes("/srv/lib/a", roots: ["/srv", "/srv/lib"]))
    }

    @Test func aWalkAsksWithTheDirectorysNames() throws {
        let e = try PathExclusions(patterns: ["2019/**/raw"], defaults: false)
        #expect(e.excludes(Array("raw".utf8), in: [Array("2019".utf8), Array("a".utf8)]))
        #expect(!e.excludes(Array("raw".utf8), in: [Array("2020".utf8)]))
        #expect(PathExclusions.names(of: "/lib/2019/a", roots: ["/lib"]) == [Array("2019".utf8), Array("a".utf8)])
        #expect(PathExclusions.names(of: "/lib", roots: ["/lib/"]) == [])
        #expect(PathExclusions.names(of: "/other", roots: ["/lib"]) == nil)
    }

    @Test("Bad patterns are refused with the reason", arguments: ["", "a/**b", "[abc", "x\\", "/", "a/../b", "[z-a]"])
    func badPatterns(pattern: String) {
        #expect(throws: PathExclusions.PatternError.self) { try PathExclusions(patterns: [pattern], defaults: false) }
    }
}
