import Foundation
import PhotoModel
import PhotoTesting
import PhotoWire
import Testing

/// The daemon on the shared real-photo corpus: what is an asset and what is not, as exiftool's
/// oracle says. (Field-by-field agreement is tested on the reader in PhotoMetadataTests.)
@Suite("Shared corpus, end to end", .serialized)
struct CorpusTests {
    /// Why the corpus tests are skipped, when they are.
    static let absent = "../shared/corpus (or $PHOTOD_CORPUS) is absent"

    @Test("Every image and video the oracle names is an asset, and nothing else", .enabled(if: TestPaths.corpus != nil, Comment(rawValue: absent)))
    func realCorpus() throws {
        let corpus = try #require(TestPaths.corpus)
        let real = corpus.appendingPathComponent("real")
        let oracle = try JSONValue.parse(Array(try Data(contentsOf: real.appendingPathComponent("oracle.json"))))
        var expected = Set<String>()
        var expectedVideos = Set<String>()
        for entry in oracle.arrayValue ?? [] {
            guard let source = entry["SourceFile"]?.stringValue, let mime = entry["File:MIMEType"]?.stringValue else { continue }
            if mime == "image/svg+xml" { continue }
            if mime.hasPrefix("image/") || mime.hasPrefix("video/") {
                expected.insert(real.appendingPathComponent(source).path)
                if mime.hasPrefix("video/") { expectedVideos.insert(real.appendingPathComponent(source).path) }
            }
        }
        #expect(expected.count > 150)

        let state = try TemporaryDirectory("corpus")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [PathBytes(real.path)], state: state)
        let status = try daemon.waitForIdle()
        let assets = try daemon.allAssets()
        let paths = Set(assets.compactMap { $0["path"]?.stringValue })
        #expect(paths.subtracting(expected).isEmpty, "indexed but not media per the oracle: \(paths.subtracting(expected).sorted())")
        #expect(expected.subtracting(paths).isEmpty, "media per the oracle but not indexed: \(expected.subtracting(paths).sorted())")
        let videos = Set(assets.filter { $0["mediaType"]?.stringValue == "video" }.compactMap { $0["path"]?.stringValue })
        #expect(videos == expectedVideos)
        #expect(status["lastScan"]?["files"]?.intValue == status["counts"]?["files"]?.intValue)

        // Every record carries the pinned fields with the pinned types.
        for a in assets {
            #expect(AssetID(rawValue: a["id"]?.stringValue ?? "") != nil)
            #expect(LocalDateTime(iso: a["localDateTime"]?.stringValue ?? "") != nil)
            #expect((1...8).contains(a["orientation"]?.intValue ?? 0))
            #expect(DateSource(rawValue: a["dateSource"]?.stringValue ?? "") != nil)
            #expect(a["resources"]?[0]?["path"] == a["path"])
            for key in ["utcOffset", "pixelWidth", "pixelHeight", "latitude", "longitude", "altitude", "make", "model",
                        "lensModel", "duration", "fileSize", "subtypes"] {
                #expect(a[key] != nil, "missing \(key)")
            }
        }

        // Spot checks through the whole stack (reader, rules, store, wire).
        func asset(_ suffix: String) -> JSONValue? { assets.first { $0["path"]?.stringValue?.hasSuffix(suffix) == true } }
        let heic = try #require(asset("heic/IMG_5195.HEIC"))
        #expect(heic["localDateTime"]?.stringValue == "2021-04-11T15:47:53.054")
        #expect(heic["utcOffset"]?.stringValue == "-05:00")
        #expect(heic["pixelWidth"]?.intValue == 2566)
        let mov = try #require(asset("mov/with-gps.mov"))
        #expect(mov["orientation"]?.intValue == 6)
        #expect(mov["mediaType"]?.stringValue == "video")
        let gps = try #require(asset("Kodak_CX7530.jpg"))
        #expect(gps["latitude"]?.doubleValue.map { $0 < 0 } == true)
        let nfc = try #require(asset("tiff/Cr\u{E9}mieux11.tiff"))
        #expect(nfc["pixelWidth"]?.intValue == 199)

        // Moments: one per distinct capture day, on the capture clock; where exiftool read a
        // DateTimeOriginal, the asset sits in that day's moment.
        var moments: [JSONValue] = []
        var offset = 0
        while true {
            let page = try daemon.call("moments.fetch", ["limit": 1000, "offset": .int(Int64(offset))])
            moments += page["moments"]?.arrayValue ?? []
            guard let next = page["nextOffset"]?.intValue else { break }
            offset = next
        }
        var assetsPerDay: [String: Int] = [:]
        for a in assets { assetsPerDay[String(a["localDateTime"]!.stringValue!.prefix(10)), default: 0] += 1 }
        #expect(Dictionary(uniqueKeysWithValues: moments.map { ($0["localDate"]!.stringValue!, $0["assetCount"]!.intValue!) }) == assetsPerDay)
        let days = moments.compactMap { $0["localDate"]?.stringValue }
        #expect(days == days.sorted(by: >), "moments newest first")
        var checkedDays = 0
        for entry in oracle.arrayValue ?? [] {
            guard let original = entry["EXIF:DateTimeOriginal"]?.stringValue, let source = entry["SourceFile"]?.stringValue,
                  let a = asset("/" + source) else { continue }
            let day = original.prefix(10).replacingOccurrences(of: ":", with: "-")
            #expect(a["localDateTime"]?.stringValue?.hasPrefix(day) == true, "\(source): not in the moment of \(day)")
            let members = try daemon.call("collections.assets", ["id": .string("m_" + day.replacingOccurrences(of: "-", with: "")),
                                                                 "limit": 1000])
            #expect(members["assets"]?.arrayValue?.contains { $0["id"] == a["id"] } == true)
            checkedDays += 1
        }
        #expect(checkedDays >= 95)

        // Folder albums: every folder with media is an album with the right count.
        var perFolder: [String: Int] = [:]
        for path in expected { perFolder[URL(fileURLWithPath: path).deletingLastPathComponent().path, default: 0] += 1 }
        let albums = try daemon.call("albums.fetch", ["limit": 1000])["albums"]?.arrayValue ?? []
        #expect(Dictionary(uniqueKeysWithValues: albums.map { ($0["path"]!.stringValue!, $0["assetCount"]!.intValue!) }) == perFolder)
        #expect(albums.allSatisfy { $0["kind"]?.stringValue == "folder" && $0["title"]?.stringValue == URL(fileURLWithPath: $0["path"]!.stringValue!).lastPathComponent })
        let smart = try daemon.call("smartAlbums.fetch")["smartAlbums"]?.arrayValue ?? []
        #expect(smart.first { $0["id"]?.stringValue == "s_allPhotos" }?["assetCount"]?.intValue == assets.count)
        #expect(smart.first { $0["id"]?.stringValue == "s_videos" }?["assetCount"]?.intValue == expectedVideos.count)
        // The subtypes the files' bytes give: HDR on the three photos that carry a gain map or
        // Apple's HDR flag (exiftool agrees), and no slo-mo, time-lapse, animation or depth map.
        let newSubtypes: Set<String> = ["highFrameRate", "timelapse", "animated", "hdr", "depthEffect", "burst"]
        var withNew: [String: Set<String>] = [:]
        for a in assets {
            let found = Set((a["subtypes"]?.arrayValue ?? []).compactMap(\.stringValue)).intersection(newSubtypes)
            if !found.isEmpty { withNew[String(a["path"]!.stringValue!.dropFirst(real.path.count + 1))] = found }
        }
        #expect(withNew == ["exiftool/t/images/Google.jpg": ["hdr"], "ianare-exif-samples/heic/mobile/iphone_13_pro_max.HEIC": ["hdr"],
                            "immich-test-assets/formats/heic/IMG_2682.heic": ["hdr"]], "\(withNew)")
        for id in ["s_slomo", "s_timelapses", "s_animated", "s_depthEffect", "s_bursts"] {
            #expect(smart.first { $0["id"]?.stringValue == id }?["assetCount"]?.intValue == 0, "\(id)")
        }
        let lists = try daemon.call("collectionLists.fetch")["lists"]?.arrayValue ?? []
        let top = try #require(lists.first { $0["parentID"]?.isNull == true })
        #expect(top["assetCount"]?.intValue == assets.count)
        #expect(top["albumCount"]?.intValue == albums.count)
        #expect(daemon.stop() == 0)

        // A restart over the unchanged library reads no file and keeps every id.
        let again = try DaemonProcess(libraries: [PathBytes(real.path)], state: state)
        let second = try again.waitForIdle()
        #expect(second["lastScan"]?["readFiles"]?.intValue == 0)
        let ids = Dictionary(uniqueKeysWithValues: try again.allAssets().map { ($0["path"]!.stringValue!, $0["id"]!.stringValue!) })
        for a in assets { #expect(ids[a["path"]!.stringValue!] == a["id"]!.stringValue!) }
        #expect(again.stop() == 0)
    }

    @Test("Broken files behave as broken/expected.json says", .enabled(if: TestPaths.corpus != nil, Comment(rawValue: absent)))
    func brokenCorpus() throws {
        let corpus = try #require(TestPaths.corpus)
        let broken = corpus.appendingPathComponent("broken")
        let expected = try JSONValue.parse(Array(try Data(contentsOf: broken.appendingPathComponent("expected.json"))))
        let state = try TemporaryDirectory("broken")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [PathBytes(broken.path)], state: state)
        try daemon.waitForIdle()
        let assets = try daemon.allAssets()
        let errors = try daemon.call("library.errors", ["limit": 100])["errors"]?.arrayValue ?? []
        for file in expected["files"]?.arrayValue ?? [] {
            let name = try #require(file["file"]?.stringValue)
            let asset = assets.first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true }
            let error = errors.first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true }
            switch file["outcome"]?.stringValue {
            case "error":
                #expect(asset == nil, "\(name) must not be an asset")
                #expect(error?["message"]?.stringValue?.isEmpty == false, "\(name) must have an error")
            case "index":
                let a = try #require(asset, "\(name) must be indexed")
                let want = try #require(file["expected"])
                if let w = want["width"]?.intValue { #expect(a["pixelWidth"]?.intValue == w, "\(name) width") }
                if let h = want["height"]?.intValue { #expect(a["pixelHeight"]?.intValue == h, "\(name) height") }
                if let make = want["make"]?.stringValue { #expect(a["make"]?.stringValue == make, "\(name) make") }
                if let d = want["duration"]?.doubleValue { #expect(abs((a["duration"]?.doubleValue ?? 0) - d) < 0.01) }
                if let original = want["dateTimeOriginal"]?.stringValue {
                    #expect(a["dateSource"]?.stringValue == "exifOriginal")
                    // Sub-seconds may follow when SubSecTimeOriginal is present ("00" → ".000").
                    #expect(a["localDateTime"]?.stringValue?.prefix(19) == Self.iso(original).prefix(19), "\(name) date")
                }
                if want["dateTimeOriginal"]?.isNull == true { #expect(a["dateSource"]?.stringValue != "exifOriginal") }
                if let g = want["gps"] {
                    if g.isNull {
                        #expect(a["latitude"]?.isNull == true, "\(name) must have no position")
                    } else {
                        #expect(abs((a["latitude"]?.doubleValue ?? 0) - (g["latitude"]?.doubleValue ?? 99)) < 1e-6)
                        #expect(abs((a["longitude"]?.doubleValue ?? 0) - (g["longitude"]?.doubleValue ?? 99)) < 1e-6)
                    }
                }
            default:  // index_or_error: either, but never both, and never silently nothing
                #expect((asset == nil) != (error == nil), "\(name): exactly one of asset or error")
                if let a = asset, let want = file["if_indexed"] {
                    if want["gps"]?.isNull == true { #expect(a["latitude"]?.isNull == true, "\(name) must have no position") }
                    if let make = want["make"]?.stringValue { #expect(a["make"]?.stringValue == make) }
                }
            }
        }
        #expect(daemon.stop() == 0)
    }

    /// `2008:10:22 16:28:39` → `2008-10-22T16:28:39`.
    static func iso(_ exif: String) -> String {
        var s = Array(exif)
        s[4] = "-"; s[7] = "-"; s[10] = "T"
        return String(s)
    }
}
