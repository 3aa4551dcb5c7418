import Foundation
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing

/// Moments, albums, smart albums and pairing through the real binaries.
@Suite("Collections, end to end", .serialized)
struct CollectionsEndToEndTests {
    @Test("RAW+JPEG, Live Photo and sidecar pairing; moments across offsets; photoctl collection commands")
    func collections() throws {
        let lib = try TemporaryDirectory("coll-lib")
        defer { lib.remove() }
        // A RAW (DNG) and its JPEG.
        try lib.write("trip/IMG_5.DNG", TIFFFixture(ifd0: [.init(0x100, .long([6000])), .init(0x101, .long([4000])),
                                                         .init(0x10F, .ascii("Canon")), .init(0xC612, .byte([1, 4, 0, 0]))],
                                                  exif: [.init(0x9003, .ascii("2019:05:04 10:00:00"))]).bytes())
        try lib.write("trip/IMG_5.JPG", Library.jpeg(date: "2019:05:04 10:00:00", width: 1500, height: 1000))
        // A Live Photo: the still (23:30 in Tokyo) and its movie, one second apart, both with offsets.
        try lib.write("trip/IMG_6.JPG", Library.jpeg(date: "2019:05:04 23:30:00", offset: "+09:00"))
        try lib.write("trip/IMG_6.MOV", MP4Fixture(majorBrand: "qt  ", compatibleBrands: ["qt  "],
                                                   appleKeys: ["com.apple.quicktime.creationdate": "2019-05-04T23:30:01+0900"]).bytes())
        // A sidecar gives a date to a file without EXIF, and a rating and keywords.
        try lib.write("trip/scan.jpg", Library.jpeg(date: nil))
        try lib.write("trip/scan.jpg.xmp", Array(XMPFixture.packet(dateTimeOriginal: "1987-07-01T12:00:00", rating: 5,
                                                                    keywords: ["family", "old"]).utf8))
        // 00:10 in New York stays on its own day.
        try lib.write("ny/early.jpg", Library.jpeg(date: "2019:05:04 00:10:00", offset: "-05:00"))

        let state = try TemporaryDirectory("coll")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let sock = ["--socket", daemon.socket.string]

        let assets = try records(try run("photoctl", sock + ["assets", "--json"]).stdout)
        #expect(assets.count == 4)
        func asset(_ suffix: String) -> JSONValue? { assets.first { $0["path"]?.stringValue?.hasSuffix(suffix) == true } }
        let raw = try #require(asset("IMG_5.JPG"))
        #expect(raw["subtypes"] == ["raw"])
        #expect(raw["pixelWidth"]?.intValue == 1500)
        #expect(raw["resources"]?.arrayValue?.map { $0["role"]?.stringValue } == ["primary", "raw"])
        let live = try #require(asset("IMG_6.JPG"))
        #expect(live["subtypes"] == ["live"])
        #expect(live["resources"]?[1]?["role"]?.stringValue == "pairedVideo")
        let scan = try #require(asset("scan.jpg"))
        #expect(scan["dateSource"]?.stringValue == "xmp")
        #expect(scan["localDateTime"]?.stringValue == "1987-07-01T12:00:00")
        #expect(scan["rating"]?.intValue == 5)
        #expect(scan["keywords"] == ["family", "old"])

        let moments = try records(try run("photoctl", sock + ["moments", "--json"]).stdout)
        #expect(moments.map { $0["id"]?.stringValue } == ["m_20190504", "m_19870701"])
        #expect(moments.first?["assetCount"]?.intValue == 3)
        #expect(moments.first?["title"]?.stringValue == "Saturday, 4 May 2019")
        let day = try records(try run("photoctl", sock + ["assets", "--in", "m_20190504", "--json"]).stdout)
        #expect(day.compactMap { $0["localDateTime"]?.stringValue } == ["2019-05-04T00:10:00", "2019-05-04T10:00:00", "2019-05-04T23:30:00"])

        let albums = try records(try run("photoctl", sock + ["albums", "--json"]).stdout)
        #expect(albums.map { $0["title"]?.stringValue } == ["ny", "trip"])
        #expect(albums.map { $0["assetCount"]?.intValue } == [1, 3])
        let inTrip = try records(try run("photoctl", sock + ["assets", "--in", albums[1]["id"]!.stringValue!, "--json"]).stdout)
        #expect(inTrip.count == 3)

        let smart = try records(try run("photoctl", sock + ["smart-albums", "--json"]).stdout)
        func count(_ id: String) -> Int? { smart.first { $0["id"]?.stringValue == id }?["assetCount"]?.intValue }
        #expect(count("s_allPhotos") == 4)
        #expect(count("s_raw") == 1)
        #expect(count("s_livePhotos") == 1)
        #expect(count("s_videos") == 0)  // the Live Photo's movie is a resource, not a video asset

        let folders = try run("photoctl", sock + ["folders"])
        #expect(folders.status == 0)
        #expect(folders.stdout.contains("[trip]"))
        let lists = try records(try run("photoctl", sock + ["folders", "--json"]).stdout)
        #expect(lists.count == 1)
        #expect(lists.first?["albumIDs"]?.arrayValue?.count == 2)

        let table = try run("photoctl", sock + ["moments"])
        #expect(table.stdout.contains("Saturday, 4 May 2019"))
        let missing = try run("photoctl", sock + ["assets", "--in", "f_nosuchalbum"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no collection"))

        // Deleting the JPEG leaves the RAW as the asset, with the same id.
        #expect(unlink(lib("trip/IMG_5.JPG").string) == 0)
        #expect(daemon.stop() == 0)
        let again = try DaemonProcess(libraries: [lib.path], state: state)
        try again.waitForIdle()
        let after = try again.allAssets()
        let alone = try #require(after.first { $0["id"] == raw["id"] })
        #expect(alone["path"]?.stringValue?.hasSuffix("IMG_5.DNG") == true)
        #expect(alone["pixelWidth"]?.intValue == 6000)
        #expect(again.stop() == 0)
    }

    @Test("Slo-mo, time-lapse, HDR video, animated GIF, Ultra HDR and depth-map photos: their subtypes, their smart albums, predicates on them; ordinary files get none",
          .enabled(if: VideoFixtures.ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func newSubtypes() throws {
        let lib = try TemporaryDirectory("subtypes-lib")
        let state = try TemporaryDirectory("subtypes")
        defer { lib.remove(); state.remove() }
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        let android = ["-movflags", "use_metadata_tags"]
        try lib.makeDirectory("v")
        try VideoFixtures.make(lib("v/slomo.mp4"), video: x264, rate: 240, seconds: 0.5)
        try VideoFixtures.make(lib("v/android-slomo.mp4"), video: x264, seconds: 1,
                               extra: ["-metadata", "com.android.capture.fps=120.000000"] + android)
        try VideoFixtures.make(lib("v/timelapse.mp4"), video: x264, seconds: 1,
                               extra: ["-metadata", "com.android.capture.fps=1.000000"] + android)
        try VideoFixtures.make(lib("v/normal.mp4"), video: x264, seconds: 1,
                               extra: ["-metadata", "com.android.capture.fps=30.000000"] + android)
        try VideoFixtures.make(lib("v/hlg.mkv"), video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none",
                                                          "-pix_fmt", "yuv420p10le", "-color_trc", "arib-std-b67",
                                                          "-color_primaries", "bt2020", "-colorspace", "bt2020nc"], seconds: 0.5)
        try VideoFixtures.make(lib("v/sdr10.mkv"), video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none",
                                                            "-pix_fmt", "yuv420p10le"], seconds: 0.5)
        try lib.makeDirectory("p")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=32x24:rate=10", "-frames:v", "3", lib("p/anim.gif").string])
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=32x24:rate=10", "-frames:v", "1", lib("p/still.gif").string])
        let rdf = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">"#
        try lib.write("p/ultrahdr.jpg", JPEGFixture(width: 64, height: 48, xmp: rdf + #"<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/></rdf:RDF></x:xmpmeta>"#).bytes())
        try lib.write("p/portrait.jpg", JPEGFixture(width: 64, height: 48, xmp: rdf + #"<rdf:Description xmlns:GDepth="http://ns.google.com/photos/1.0/depthmap/" GDepth:Format="RangeInverse" GDepth:Mime="image/jpeg"/></rdf:RDF></x:xmpmeta>"#).bytes())
        try lib.write("p/plain.jpg", JPEGFixture(width: 64, height: 48).bytes())
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let assets = try daemon.allAssets()
        func subtypes(_ name: String) -> Set<String> {
            let a = assets.first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true }
            return Set((a?["subtypes"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        let expected: [String: Set<String>] = [
            "slomo.mp4": ["highFrameRate"], "android-slomo.mp4": ["highFrameRate"], "timelapse.mp4": ["timelapse"], "normal.mp4": [],
            "hlg.mkv": ["hdr"], "sdr10.mkv": [], "anim.gif": ["animated"], "still.gif": [], "ultrahdr.jpg": ["hdr"],
            "portrait.jpg": ["depthEffect"], "plain.jpg": [],
        ]
        for (name, want) in expected { #expect(subtypes(name) == want, "\(name): \(subtypes(name))") }
        let slomo = try #require(assets.first { $0["path"]?.stringValue?.hasSuffix("/android-slomo.mp4") == true })
        #expect(abs((slomo["frameRate"]?.doubleValue ?? 0) - 30) < 0.01)

        // The smart albums hold them, counted and listed.
        let smart = try daemon.call("smartAlbums.fetch")["smartAlbums"]?.arrayValue ?? []
        func members(_ id: String) throws -> [String] {
            try (daemon.call("collections.assets", ["id": .string(id)])["assets"]?.arrayValue ?? [])
                .compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) }.sorted()
        }
        for (id, names) in [("s_slomo", ["android-slomo.mp4", "slomo.mp4"]), ("s_timelapses", ["timelapse.mp4"]),
                            ("s_animated", ["anim.gif"]), ("s_depthEffect", ["portrait.jpg"])] {
            #expect(try members(id) == names, "\(id)")
            #expect(smart.first { $0["id"]?.stringValue == id }?["assetCount"]?.intValue == names.count, "\(id)")
        }
        // And predicates on them.
        let hdr = try daemon.call("assets.fetch", ["predicate": #"subtypes CONTAINS "hdr""#])["assets"]?.arrayValue ?? []
        #expect(Set(hdr.compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) }) == ["hlg.mkv", "ultrahdr.jpg"])
        let photoctl = try run("photoctl", ["--socket", daemon.socket.string, "smart-albums"])
        #expect(photoctl.status == 0 && photoctl.stdout.contains("Slo-mo") && photoctl.stdout.contains("Portrait"), "\(photoctl.stdout)")
        #expect(daemon.stop() == 0)
    }
}
