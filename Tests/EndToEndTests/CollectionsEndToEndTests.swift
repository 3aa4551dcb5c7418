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
        #expect(moments.first?["dateTitle"]?.stringValue == "Saturday, 4 May 2019")
        #expect(moments.first?["title"] == .null, "no photo of the day has a place")
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

    @Test("Key assets: every collection in every fetch names up to three; favorites first, spread over the day; a change set names the collections whose key assets moved; images.request gives the tile")
    func keyAssets() throws {
        let lib = try TemporaryDirectory("keys-lib")
        let state = try TemporaryDirectory("keys")
        defer { lib.remove(); state.remove() }
        for hour in [8, 10, 12, 14, 16] {
            try lib.write("trip/h\(hour).jpg", Library.jpeg(date: "2019:05:04 \(hour < 10 ? "0" : "")\(hour):00:00"))
        }
        try lib.write("trip/later/x.jpg", Library.jpeg(date: "2019:05:05 09:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        var id: [String: String] = [:]
        for a in try daemon.allAssets() {
            let name = String(a["path"]!.stringValue!.split(separator: "/").last!.dropLast(4))
            id[name] = a["id"]!.stringValue!
        }
        func keys(_ record: JSONValue?) -> [String] {
            let ids = (record?["keyAssetIDs"]?.arrayValue ?? []).compactMap(\.stringValue)
            return ids.map { i in id.first { $0.value == i }?.key ?? i }
        }
        func record(_ method: String, _ key: String, _ collection: String) throws -> JSONValue? {
            try daemon.call(method)[key]?.arrayValue?.first { $0["id"]?.stringValue == collection || $0["title"]?.stringValue == collection }
        }
        // The day's span is 08:00–16:00: the slots' times are 09:20, 12:00 and 14:40.
        #expect(keys(try record("moments.fetch", "moments", "m_20190504")) == ["h10", "h12", "h16"])
        #expect(keys(try record("albums.fetch", "albums", "trip")) == ["h10", "h12", "h16"])
        #expect(keys(try record("albums.fetch", "albums", "later")) == ["x"])
        #expect(keys(try record("smartAlbums.fetch", "smartAlbums", "s_allPhotos")) == ["x", "h16", "h14"])
        #expect(keys(try record("smartAlbums.fetch", "smartAlbums", "s_favorites")) == [])
        #expect(keys(try record("smartAlbums.fetch", "smartAlbums", "s_recentlyAdded")).count == 3)
        #expect(keys(try record("momentLists.fetch", "years", "y_2019")) == ["x", "h16", "h14"])
        #expect(keys(try record("momentLists.fetch", "months", "mo_2019-05")) == ["x", "h16", "h14"])
        #expect(keys(try record("collectionLists.fetch", "lists", String(decoding: lib.path.lastComponent, as: UTF8.self))) == ["x", "h16", "h14"])
        #expect(keys(try record("collectionLists.fetch", "lists", "trip")) == ["x"])

        // A favorite comes first; the other two slots (10:00 and 14:00) go to the rest.
        var token = try daemon.call("changes.currentToken")["token"]!.intValue!
        func changedCollections() throws -> Set<String> {
            let changes = try daemon.call("changes.since", ["since": .int(Int64(token))])
            token = changes["token"]?.intValue ?? token
            return Set((changes["changes"]?.arrayValue ?? []).flatMap { ($0["collections"]?["updated"]?.arrayValue ?? []).compactMap(\.stringValue) })
        }
        _ = try daemon.call("assets.setFavorite", ["ids": [.string(id["h8"]!)], "favorite": true])
        #expect(keys(try record("moments.fetch", "moments", "m_20190504")) == ["h8", "h10", "h14"])
        #expect(keys(try record("smartAlbums.fetch", "smartAlbums", "s_favorites")) == ["h8"])
        let trip = try #require(try record("albums.fetch", "albums", "trip")?["id"]?.stringValue)
        let named = try changedCollections()
        #expect(named.isSuperset(of: ["m_20190504", trip, "s_favorites"]), "\(named)")
        // A hidden asset is never one.
        _ = try daemon.call("assets.setHidden", ["ids": [.string(id["h10"]!)], "hidden": true])
        #expect(keys(try record("moments.fetch", "moments", "m_20190504")) == ["h8", "h12", "h14"])
        #expect(try changedCollections().contains("m_20190504"))
        #expect(keys(try record("smartAlbums.fetch", "smartAlbums", "s_hidden")) == [])

        // User albums and their folders.
        let folder = try #require(try daemon.call("albums.createFolder", ["title": "Trips"])["id"]?.stringValue)
        let album = try #require(try daemon.call("albums.create", ["title": "Best", "folder": .string(folder)])["id"]?.stringValue)
        _ = try daemon.call("albums.addAssets", ["id": .string(album), "ids": [.string(id["h16"]!), .string(id["h12"]!)]])
        let users = try daemon.call("userAlbums.fetch")
        #expect(keys(users["albums"]?.arrayValue?.first { $0["id"]?.stringValue == album }) == ["h12", "h16"])
        #expect(keys(users["folders"]?.arrayValue?.first { $0["id"]?.stringValue == folder }) == ["h16", "h12"])
        // A member hidden leaves the album's key assets, and the album is updated.
        _ = try changedCollections()
        _ = try daemon.call("assets.setHidden", ["ids": [.string(id["h12"]!)], "hidden": true])
        #expect(keys(try daemon.call("userAlbums.fetch")["albums"]?.arrayValue?.first { $0["id"]?.stringValue == album }) == ["h16"])
        // The album is updated, and so is the folder above it (its key assets are the album's newest).
        #expect(try changedCollections().isSuperset(of: [album, folder]))

        // images.request on a key asset gives the tile.
        let tile = try daemon.call("images.request", ["id": .string(id["h8"]!), "targetSize": [256, 256]])
        let path = try #require(tile["path"]?.stringValue)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(tile["width"]?.intValue == 256 || tile["height"]?.intValue == 256)
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

    /// An iPhone-like JPEG of a burst: Apple's maker note with its BurstUUID, shot at `time`.
    static func burstPhoto(_ burst: String?, time: String) -> [UInt8] {
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
        if let burst {
            note += [0, 1] + [0, 0x0B, 0, 2] + [0, 0, 0, UInt8(burst.utf8.count + 1)] + [0, 0, 0, UInt8(14 + 2 + 12 + 4)]
            note += [0, 0, 0, 0] + Array(burst.utf8) + [0]
        } else {
            note += [0, 0, 0, 0, 0, 0]
        }
        let exif = ExifFixture(byteOrder: .big, make: "Apple", dateTimeOriginal: time, extraExif: [.init(0x927C, .undefined(note))])
        return JPEGFixture.make(width: 64, height: 48, exif: exif)
    }

    @Test("Bursts: every member has subtype burst and its burstIdentifier, the first visible one represents it (the Bursts smart album holds one entry per burst), b_<id> lists the burst, the representative moves when it is deleted or hidden and back")
    func bursts() throws {
        let lib = try TemporaryDirectory("bursts-lib")
        let state = try TemporaryDirectory("bursts")
        defer { lib.remove(); state.remove() }
        let a = "6A2F1C3E-8D4B-4F1A-9C2E-7B5D3A1F0E9C", b = "11111111-2222-4333-8444-555555555555"
        try lib.write("burst/IMG_0002.JPG", Self.burstPhoto(a, time: "2024:05:01 12:00:01"))
        try lib.write("burst/IMG_0001.JPG", Self.burstPhoto(a, time: "2024:05:01 12:00:00"))
        try lib.write("burst/IMG_0003.JPG", Self.burstPhoto(a, time: "2024:05:01 12:00:02"))
        try lib.write("other/IMG_0100.JPG", Self.burstPhoto(b, time: "2024:06:01 09:00:00"))
        try lib.write("other/IMG_0101.JPG", Self.burstPhoto(b, time: "2024:06:01 09:00:01"))
        try lib.write("other/IMG_0200.JPG", Self.burstPhoto(nil, time: "2024:06:02 09:00:00"))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        func byName() throws -> [String: JSONValue] {
            let all = try daemon.call("assets.fetch", ["includeAllBurstAssets": true, "limit": 1000])["assets"]?.arrayValue ?? []
            return Dictionary(uniqueKeysWithValues: all.map { (String($0["path"]!.stringValue!.split(separator: "/").last!), $0) })
        }
        func names(_ id: String) throws -> [String] {
            (try daemon.call("collections.assets", ["id": .string(id)])["assets"]?.arrayValue ?? [])
                .compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) }
        }
        var assets = try byName()
        for name in ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG"] {
            #expect(assets[name]?["burstIdentifier"]?.stringValue == a, "\(name)")
            #expect(assets[name]?["subtypes"]?.arrayValue?.contains(.string("burst")) == true, "\(name)")
            #expect(assets[name]?["representsBurst"]?.boolValue == (name == "IMG_0001.JPG"), "\(name)")
        }
        #expect(assets["IMG_0200.JPG"]?["burstIdentifier"] == .null && assets["IMG_0200.JPG"]?["subtypes"]?.arrayValue == [])
        #expect(try names("s_bursts") == ["IMG_0001.JPG", "IMG_0100.JPG"])
        #expect(try daemon.call("smartAlbums.fetch")["smartAlbums"]?.arrayValue?.first { $0["id"]?.stringValue == "s_bursts" }?["assetCount"]?.intValue == 2)
        #expect(try names("b_" + a) == ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0003.JPG"])
        // Fetches show a burst as its representative alone, unless includeAllBurstAssets.
        func fetched(_ params: JSONObject, method: String = "assets.fetch") throws -> (names: [String], total: Int) {
            let page = try daemon.call(method, params)
            let names = (page["assets"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) }
            return (names.sorted(), page["total"]?.intValue ?? -1)
        }
        let plain = try fetched([:])
        #expect(plain.names == ["IMG_0001.JPG", "IMG_0100.JPG", "IMG_0200.JPG"] && plain.total == 3, "\(plain)")
        let everything = try fetched(["includeAllBurstAssets": true])
        #expect(everything.names.count == 6 && everything.total == 6, "\(everything)")
        let sorted = try fetched(["sort": "-localDateTime"])
        #expect(sorted.names == ["IMG_0001.JPG", "IMG_0100.JPG", "IMG_0200.JPG"] && sorted.total == 3, "\(sorted)")
        let filtered = try fetched(["predicate": #"subtypes CONTAINS "burst""#])
        #expect(filtered.names == ["IMG_0001.JPG", "IMG_0100.JPG"], "\(filtered)")
        let ids = try daemon.call("assets.fetchIDs", ["includeAllBurstAssets": true])["ids"]?.arrayValue?.count
        let visibleIDs = try daemon.call("assets.fetchIDs")["ids"]?.arrayValue?.count
        #expect(ids == 6 && visibleIDs == 3)
        let moment = try fetched(["id": "m_20240501"], method: "collections.assets")
        #expect(moment.names == ["IMG_0001.JPG"] && moment.total == 1, "\(moment)")
        let wholeMoment = try fetched(["id": "m_20240501", "includeAllBurstAssets": true], method: "collections.assets")
        #expect(wholeMoment.names.count == 3, "\(wholeMoment)")
        do {
            _ = try daemon.call("collections.assets", ["id": "b_00000000-0000-4000-8000-000000000000"])
            Issue.record("an unknown burst is found")
        } catch {
            #expect("\(error)".contains("notFound"), "\(error)")
        }

        // The representative deleted: the next takes over, in the same change set.
        let c = try daemon.connect()
        _ = try c.call("changes.subscribe")
        c.setTimeout(.seconds(30))
        try FileManager.default.removeItem(atPath: lib("burst/IMG_0001.JPG").string)
        var sawNewRepresentative = false
        while !sawNewRepresentative, let n = try? c.nextNotification() {
            guard n.method == "changes" else { continue }
            let updated = n.params?["assets"]?["updated"]?.arrayValue ?? []
            sawNewRepresentative = updated.contains(assets["IMG_0002.JPG"]!["id"]!)
            if sawNewRepresentative {
                #expect(n.params?["collections"]?["updated"]?.arrayValue?.contains(.string("s_bursts")) == true, "\(n)")
            }
        }
        #expect(sawNewRepresentative, "the change set names the new representative")
        // In Recently Deleted it is listed, though it no longer represents its burst.
        #expect(try names("s_recentlyDeleted") == ["IMG_0001.JPG"])
        assets = try byName()
        #expect(assets["IMG_0002.JPG"]?["representsBurst"]?.boolValue == true)
        #expect(try names("s_bursts") == ["IMG_0002.JPG", "IMG_0100.JPG"])
        #expect(try names("b_" + a) == ["IMG_0002.JPG", "IMG_0003.JPG"])
        // Back (the same bytes): the first again, with its id.
        try lib.write("burst/IMG_0001.JPG", Self.burstPhoto(a, time: "2024:05:01 12:00:00"))
        try eventually("the first back as the burst's representative") { try names("s_bursts") } until: { $0 == ["IMG_0001.JPG", "IMG_0100.JPG"] }
        assets = try byName()
        #expect(assets["IMG_0001.JPG"]?["representsBurst"]?.boolValue == true && assets["IMG_0002.JPG"]?["representsBurst"]?.boolValue == false)
        // Hidden, the representative passes the role on; shown again, takes it back.
        _ = try daemon.call("assets.setHidden", ["ids": [assets["IMG_0001.JPG"]!["id"]!], "hidden": true])
        #expect(try names("s_bursts") == ["IMG_0002.JPG", "IMG_0100.JPG"])
        _ = try daemon.call("assets.setHidden", ["ids": [assets["IMG_0003.JPG"]!["id"]!], "hidden": true])
        #expect(try names("s_hidden") == ["IMG_0001.JPG", "IMG_0003.JPG"], "Hidden lists every hidden member")
        _ = try daemon.call("assets.setHidden", ["ids": [assets["IMG_0003.JPG"]!["id"]!], "hidden": false])
        #expect(try names("b_" + a) == ["IMG_0002.JPG", "IMG_0003.JPG"])
        _ = try daemon.call("assets.setHidden", ["ids": [assets["IMG_0001.JPG"]!["id"]!], "hidden": false])
        #expect(try names("s_bursts") == ["IMG_0001.JPG", "IMG_0100.JPG"])
        let kept = try daemon.call("smartAlbums.fetch")["smartAlbums"]?.arrayValue?.first { $0["id"]?.stringValue == "s_bursts" }
        #expect(kept?["assetCount"]?.intValue == 2)
        // Saved again without its BurstUUID, it leaves the burst and stands for none.
        try lib.write("burst/IMG_0001.JPG", Self.burstPhoto(nil, time: "2024:05:01 12:00:00"))
        try eventually("the first out of the burst") { try names("s_bursts") } until: { $0 == ["IMG_0002.JPG", "IMG_0100.JPG"] }
        assets = try byName()
        #expect(assets["IMG_0001.JPG"]?["burstIdentifier"] == .null && assets["IMG_0001.JPG"]?["representsBurst"]?.boolValue == false,
                "\(String(describing: assets["IMG_0001.JPG"]))")
        #expect(assets["IMG_0002.JPG"]?["representsBurst"]?.boolValue == true)
        #expect(daemon.stop() == 0)
    }
}
