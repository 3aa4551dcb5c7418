import Foundation
import PhotoClient
import PhotoImaging
import PhotoModel
import PhotoSystem
import PhotoTesting
import PhotoWire
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Image requests against a real daemon: renders land in the cache and come back by path,
/// degraded first, shared, cancelled, pre-cached, invalidated and evicted.
@Suite("Images, end to end", .serialized)
struct ImagesEndToEndTests {
    /// Four quadrants (red, green / blue, white), so that a turn or a mirror shows.
    static func pattern(width: Int, height: Int) -> RenderedImage {
        var p = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let rgb: [UInt8] = switch (x < width / 2, y < height / 2) {
                case (true, true): [220, 30, 30]
                case (false, true): [30, 200, 40]
                case (true, false): [30, 40, 210]
                case (false, false): [240, 240, 240]
                }
                p.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: rgb)
            }
        }
        return RenderedImage(size: PixelSize(width: width, height: height), channels: 3, pixels: p)
    }

    /// A JPEG of the pattern with an EXIF block: the orientation and a 160×107 thumbnail.
    static func photo(width: Int, height: Int, orientation: Int) throws -> [UInt8] {
        let main = try pattern(width: width, height: height).encodeJPEG(quality: 90).bytes
        let thumb = try pattern(width: 160, height: 107).encodeJPEG(quality: 80).bytes
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0]
        func u16(_ v: Int) { tiff += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { tiff += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        u16(1)
        u16(0x0112); u16(3); u32(1); u16(orientation); u16(0)
        u32(26)  // IFD1
        u16(2)
        u16(0x0201); u16(4); u32(1); u32(26 + 2 + 24 + 4)
        u16(0x0202); u16(4); u32(1); u32(thumb.count)
        u32(0)
        tiff += thumb
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload + main[2...]
    }

    /// A library of photos, a video, a damaged JPEG and one that claims 50,000 × 50,000 pixels.
    static func library(_ lib: TemporaryDirectory, photos: Int = 3) throws {
        for i in 0..<photos { try lib.write("photos/p\(i).jpg", try photo(width: 1200, height: 800, orientation: 6)) }
        try lib.write("video/clip.mp4", MP4Fixture(width: 640, height: 360).bytes())
        try lib.write("broken/cut.jpg", Array(try photo(width: 1200, height: 800, orientation: 1).prefix(1500)))
        try lib.write("broken/huge.jpg", JPEGFixture(width: 50_000, height: 50_000).bytes())
    }

    static func asset(_ daemon: DaemonProcess, named name: String) throws -> String {
        let all = try daemon.allAssets()
        let match = all.first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true }
        return try #require(match?["id"]?.stringValue, "no asset \(name) in \(all.count)")
    }

    static func request(_ c: RawClient, id: Int, asset: String, size: [Int], mode: String = "fit",
                        delivery: String = "highQuality") throws {
        try c.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"images.request","params":{"id":"\#(asset)","targetSize":[\#(size[0]),\#(size[1])],"contentMode":"\#(mode)","deliveryMode":"\#(delivery)"}}"# + "\n")
    }

    /// Reads lines until the response to `id`; returns the notifications before it too.
    static func answer(_ c: RawClient, id: Int) throws -> (response: JSONValue, before: [JSONValue]) {
        var before: [JSONValue] = []
        while true {
            let line = try c.readLine()
            if line["id"]?.intValue == id { return (line, before) }
            before.append(line)
        }
    }

    /// The image file's size and its mean colour in the middle of each quadrant.
    static func inspect(_ path: String) throws -> (size: PixelSize, quadrants: [[Int]]) {
        let image = try ImageRenderer().render(path: PathBytes(path), targetSize: PixelSize(width: 4096, height: 4096),
                                               contentMode: .fit)
        let (w, h) = (image.size.width, image.size.height)
        let quadrants = [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)].map { x, y in
            image.pixel(x: x, y: y).prefix(3).map(Int.init)
        }
        return (image.size, quadrants)
    }

    static func near(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) < 40 } }

    @Test("A render lands in the cache, turned upright; degraded first for opportunistic; a second request is a hit; fill is exact")
    func renderAndCache() throws {
        let lib = try TemporaryDirectory("img-lib")
        let state = try TemporaryDirectory("img")
        defer { lib.remove(); state.remove() }
        try Self.library(lib)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let id = try Self.asset(daemon, named: "p0.jpg")
        let c = try RawClient(daemon.socket)

        // Opportunistic: the EXIF thumbnail as `images.degraded`, then the render.
        try Self.request(c, id: 1, asset: id, size: [256, 256], delivery: "opportunistic")
        let (first, before) = try Self.answer(c, id: 1)
        let result = try #require(first["result"], "\(first)")
        let degraded = try #require(before.first { $0["method"]?.stringValue == "images.degraded" }, "no degraded image before the final one")
        #expect(degraded["params"]?["requestID"]?.intValue == 1)
        #expect(degraded["params"]?["isDegraded"]?.boolValue == true)
        #expect(degraded["params"]?["width"]?.intValue == 107)  // the 160×107 thumbnail, turned
        #expect(result["isDegraded"]?.boolValue == false)
        let path = try #require(result["path"]?.stringValue)
        #expect(path.hasPrefix(state("cache").string + "/"))
        #expect(path.hasSuffix(".jpg"))
        // 1200×800 stored, orientation 6: shown 800×1200, fit in 256×256 → 171×256 (±1).
        let (size, quadrants) = try Self.inspect(path)
        #expect(abs(size.width - 171) <= 1 && size.height == 256, "\(size)")
        #expect(result["width"]?.intValue == size.width && result["height"]?.intValue == size.height)
        // Turned 90° clockwise: blue, red / white, green.
        #expect(Self.near(quadrants[0], [30, 40, 210]) && Self.near(quadrants[1], [220, 30, 30]), "\(quadrants)")
        #expect(Self.near(quadrants[2], [240, 240, 240]) && Self.near(quadrants[3], [30, 200, 40]), "\(quadrants)")

        // The same request again: the same file, from the cache.
        try Self.request(c, id: 2, asset: id, size: [256, 256])
        #expect(try Self.answer(c, id: 2).response["result"]?["path"]?.stringValue == path)
        let images = try daemon.call("library.status")["images"]
        #expect(images?["cacheHits"]?.intValue == 1)
        #expect(images?["rendered"]?.intValue == 1)

        // Fill: exactly the target size.
        try Self.request(c, id: 3, asset: id, size: [200, 120], mode: "fill")
        let fill = try #require(try Self.answer(c, id: 3).response["result"])
        #expect(try Self.inspect(fill["path"]!.stringValue!).size == PixelSize(width: 200, height: 120))

        // Fast, at a size not cached yet: a cached stand-in at once.
        try Self.request(c, id: 4, asset: id, size: [300, 300], delivery: "fast")
        #expect(try Self.answer(c, id: 4).response["result"]?["isDegraded"]?.boolValue == true)

        // Never larger than the photo itself.
        try Self.request(c, id: 5, asset: id, size: [4000, 4000])
        let big = try #require(try Self.answer(c, id: 5).response["result"])
        #expect(big["width"]?.intValue == 800 && big["height"]?.intValue == 1200, "\(big)")

        // Through the client library and photoctl.
        let library = PhotoLibrary(socket: daemon.socket)
        var stand: PhotoImage?
        let image = try library.requestImage(for: id, width: 64, height: 64, deliveryMode: .opportunistic) { stand = $0 }
        // Every image at hand (the 107×160 thumbnail, the renders above) is larger than the
        // 43×64 final one: no stand-in.
        #expect(stand == nil)
        #expect(image.width == 43 || image.width == 42)
        let cli = try run("photoctl", ["--socket", daemon.socket.string, "image", id, "--size", "256x256"])
        #expect(cli.status == 0)
        #expect(cli.stdout == path + "\n")
        #expect(daemon.stop() == 0)
    }

    @Test("A video without a frame, damaged files and over-limit images fail with a reason, bad requests are invalid; nothing crashes")
    func errors() throws {
        let lib = try TemporaryDirectory("img-err-lib")
        let state = try TemporaryDirectory("img-err")
        defer { lib.remove(); state.remove() }
        try Self.library(lib, photos: 1)
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)
        func error(_ asset: String, _ n: Int) throws -> JSONValue {
            try Self.request(c, id: n, asset: asset, size: [256, 256])
            return try #require(try Self.answer(c, id: n).response["error"])
        }
        // A hand-built MP4 with a track and no frame data: nothing to show, and no cover picture.
        let video = try error(try Self.asset(daemon, named: "clip.mp4"), 1)
        #expect(video["code"]?.intValue == -32008)
        #expect(video["data"]?["reason"]?.stringValue == "undecodable", "\(video)")
        let cut = try error(try Self.asset(daemon, named: "cut.jpg"), 2)
        #expect(cut["code"]?.intValue == -32008)
        #expect(cut["data"]?["reason"]?.stringValue == "corrupt", "\(cut)")
        // huge.jpg has no image data at all: the claim alone is refused.
        let huge = try error(try Self.asset(daemon, named: "huge.jpg"), 3)
        #expect(huge["code"]?.intValue == -32008)
        #expect(huge["data"]?["reason"]?.stringValue == "tooLarge", "\(huge)")
        #expect(try error("a_aaaaaaaaaaaaaaaaaaaa", 4)["code"]?.intValue == -32004)
        #expect(try error("nope", 5)["code"]?.intValue == -32602)

        let photo = try Self.asset(daemon, named: "p0.jpg")
        try c.send(#"{"jsonrpc":"2.0","id":6,"method":"images.request","params":{"id":"\#(photo)","targetSize":[0,10]}}"# + "\n")
        #expect(try Self.answer(c, id: 6).response["error"]?["data"]?["param"]?.stringValue == "targetSize")
        try c.send(#"{"jsonrpc":"2.0","id":7,"method":"images.request","params":{"id":"\#(photo)","targetSize":[10,10],"contentMode":"stretch"}}"# + "\n")
        #expect(try Self.answer(c, id: 7).response["error"]?["code"]?.intValue == -32602)
        // In a batch: refused (its answer would hold up the batch's).
        try c.send(#"[{"jsonrpc":"2.0","id":8,"method":"images.request","params":{"id":"\#(photo)","targetSize":[10,10]}},{"jsonrpc":"2.0","id":9,"method":"rpc.hello"}]"# + "\n")
        let batch = try #require(try c.readLine().arrayValue)
        #expect(batch.first { $0["id"]?.intValue == 8 }?["error"]?["code"]?.intValue == -32600)
        #expect(batch.first { $0["id"]?.intValue == 9 }?["result"] != nil)
        let cli = try run("photoctl", ["--socket", daemon.socket.string, "image", try Self.asset(daemon, named: "clip.mp4"),
                                       "--size", "64x64"])
        #expect(cli.status == 1)
        #expect(cli.stdout.isEmpty && cli.stderr.contains("undecodable"), "\(cli.stderr)")
        #expect(try daemon.call("library.status")["images"]?["failed"]?.intValue == 4)
        #expect(daemon.stop() == 0)
    }

    /// The quadrant pattern as a clip (`seconds` of it, keyframes every half second), its
    /// display matrix turned `degrees` clockwise as a phone writes a portrait clip.
    static func patternClip(_ dir: TemporaryDirectory, _ name: String, width: Int, height: Int, degrees: Int = 0,
                            video: [String] = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "15"],
                            extra: [String] = []) throws -> [UInt8] {
        let still = try dir.write("\(name).pattern.jpg", try pattern(width: width, height: height).encodeJPEG(quality: 95).bytes)
        let out = dir(name)
        try VideoFixtures.ffmpeg(["-loop", "1", "-framerate", "30", "-i", still.string, "-f", "lavfi", "-i", "sine", "-t", "3"]
                                 + video + ["-c:a", "aac", "-shortest"] + extra + [out.string])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out.string)))
        if degrees != 0 { try VideoFixtures.setMatrix(&bytes, degrees: degrees) }
        dir.remove()
        return bytes
    }

    @Test("Videos: posters upright at the size asked, the cover picture first for opportunistic, pre-cached, invalidated when the file changes; frame rate, codecs and bit rate in the record and in predicates",
          .enabled(if: VideoFixtures.ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func videos() throws {
        let lib = try TemporaryDirectory("img-video-lib")
        let state = try TemporaryDirectory("img-video")
        let work = try TemporaryDirectory("img-video-work")
        defer { lib.remove(); state.remove(); work.remove() }
        try lib.write("phone/portrait.mp4", try Self.patternClip(try TemporaryDirectory("clip", in: work.path.string), "p.mp4",
                                                                  width: 640, height: 360, degrees: 90))
        try lib.write("cam/hevc.mov", try Self.patternClip(try TemporaryDirectory("clip", in: work.path.string), "h.mov", width: 480, height: 270,
                                                           video: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=none", "-tag:v", "hvc1"]))
        let cover = work("cover.png")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=48x48", "-frames:v", "1", cover.string])
        let covered = work("covered.mp4")
        try VideoFixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=640x480:rate=30", "-i", cover.string, "-t", "2", "-map", "0:v", "-map", "1:v",
                                  "-c:v:0", "libx264", "-preset", "ultrafast", "-pix_fmt:v:0", "yuv420p", "-c:v:1", "png",
                                  "-disposition:v:1", "attached_pic", "-an", covered.string])
        try lib.write("cam/covered.mp4", [UInt8](try Data(contentsOf: URL(fileURLWithPath: covered.string))))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)

        // The record: what libavformat read.
        let all = try daemon.allAssets()
        let portrait = try #require(all.first { $0["path"]?.stringValue?.hasSuffix("/portrait.mp4") == true })
        #expect(portrait["videoCodec"]?.stringValue == "h264" && portrait["audioCodec"]?.stringValue == "aac", "\(portrait)")
        #expect(abs((portrait["frameRate"]?.doubleValue ?? 0) - 30) < 0.01)
        #expect((portrait["bitRate"]?.intValue ?? 0) > 1000)
        #expect(portrait["orientation"]?.intValue == 6)
        let covers = try #require(all.first { $0["path"]?.stringValue?.hasSuffix("/covered.mp4") == true })
        #expect(covers["audioCodec"] == .null)
        for (predicate, expected) in [("videoCodec == \"HEVC\"", ["hevc.mov"]), ("audioCodec == null AND mediaType == \"video\"", ["covered.mp4"]),
                                      ("frameRate BETWEEN 29.9 AND 30.1 AND bitRate > 1000", ["covered.mp4", "hevc.mov", "portrait.mp4"])] {
            let page = try daemon.call("assets.fetch", ["predicate": .string(predicate), "sort": "path"])
            let names = (page["assets"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue?.split(separator: "/").last.map(String.init) }
            #expect(names.sorted() == expected, "\(predicate): \(names)")
        }

        // A phone's portrait clip: upright, fit in 256×256 → 144×256.
        let id = try Self.asset(daemon, named: "portrait.mp4")
        try Self.request(c, id: 1, asset: id, size: [256, 256])
        let result = try #require(try Self.answer(c, id: 1).response["result"])
        let path = try #require(result["path"]?.stringValue)
        let (size, quadrants) = try Self.inspect(path)
        #expect(size == PixelSize(width: 144, height: 256) && result["width"]?.intValue == 144, "\(size)")
        // Turned 90° clockwise: blue, red / white, green.
        #expect(Self.near(quadrants[0], [30, 40, 210]) && Self.near(quadrants[1], [220, 30, 30]), "\(quadrants)")
        #expect(Self.near(quadrants[2], [240, 240, 240]) && Self.near(quadrants[3], [30, 200, 40]), "\(quadrants)")
        let cli = try run("photoctl", ["--socket", daemon.socket.string, "image", id, "--size", "256x256"])
        #expect(cli.status == 0 && cli.stdout == path + "\n", "\(cli)")

        // Opportunistic: the cover picture first, then the poster.
        let coverID = try Self.asset(daemon, named: "covered.mp4")
        try Self.request(c, id: 2, asset: coverID, size: [320, 320], delivery: "opportunistic")
        let (final, before) = try Self.answer(c, id: 2)
        let degraded = try #require(before.first { $0["method"]?.stringValue == "images.degraded" }, "no cover picture first")
        #expect(degraded["params"]?["width"]?.intValue == 48 && degraded["params"]?["height"]?.intValue == 48, "\(degraded)")
        let poster = try #require(final["result"])
        #expect(poster["width"]?.intValue == 320 && poster["height"]?.intValue == 240 && poster["isDegraded"]?.boolValue == false)

        // Pre-caching renders videos too.
        let hevc = try Self.asset(daemon, named: "hevc.mov")
        let library = PhotoLibrary(socket: daemon.socket)
        let started = try library.startCachingImages(for: [hevc], width: 200, height: 200)
        #expect(started.queued == 1 && started.skipped.isEmpty, "\(started)")
        try eventually("the video pre-rendered") { try daemon.call("library.status")["images"] } until: { $0?["preRendered"]?.intValue == 1 }
        try Self.request(c, id: 3, asset: hevc, size: [200, 200])
        let cached = try #require(try Self.answer(c, id: 3).response["result"])
        #expect(cached["width"]?.intValue == 200 && cached["height"]?.intValue == 113 || cached["height"]?.intValue == 112, "\(cached)")
        #expect(try daemon.call("library.status")["images"]?["preRendered"]?.intValue == 1)

        // The file replaced by another clip: its old images go, the next poster is of the new one.
        try lib.write("phone/portrait.mp4", try Self.patternClip(try TemporaryDirectory("clip", in: work.path.string), "q.mp4",
                                                                  width: 640, height: 360))
        let after = try eventually("the replaced clip read") {
            try daemon.allAssets().first { $0["path"]?.stringValue?.hasSuffix("/portrait.mp4") == true }
        } until: { $0?["orientation"]?.intValue == 1 }
        #expect(after?["id"]?.stringValue == id, "the replaced clip keeps its asset: \(String(describing: after))")
        try Self.request(c, id: 4, asset: id, size: [256, 256])
        let landscape = try #require(try Self.answer(c, id: 4).response["result"])
        #expect(landscape["path"]?.stringValue != path && landscape["width"]?.intValue == 256 && landscape["height"]?.intValue == 144,
                "\(landscape)")
        #expect(daemon.stop() == 0)
    }

    @Test("A waiting request is cancelled (its answer first), requests for the same image share one render, a disconnect drops its requests")
    func cancelAndShare() throws {
        let lib = try TemporaryDirectory("img-cancel-lib")
        let state = try TemporaryDirectory("img-cancel")
        defer { lib.remove(); state.remove() }
        try lib.write("big.jpg", try Self.photo(width: 4000, height: 3000, orientation: 1))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--image-workers", "1"])
        try daemon.waitForIdle()
        let id = try Self.asset(daemon, named: "big.jpg")
        let c = try RawClient(daemon.socket)
        // 20 sizes on one worker: the last is still waiting when the cancel arrives.
        for n in 1...20 { try Self.request(c, id: n, asset: id, size: [1000 + n * 7, 1000]) }
        try c.send(#"{"jsonrpc":"2.0","id":100,"method":"images.cancel","params":{"requestID":20}}"# + "\n")
        var answers: [Int: JSONValue] = [:]
        var order: [Int] = []
        while answers[100] == nil {
            let line = try c.readLine()
            guard let n = line["id"]?.intValue else { continue }
            answers[n] = line
            order.append(n)
        }
        #expect(answers[100]?["result"]?["cancelled"]?.boolValue == true)
        #expect(answers[20]?["error"]?["code"]?.intValue == -32007)
        #expect(order.firstIndex(of: 20)! < order.firstIndex(of: 100)!)
        // The rest are all answered; cancelling again finds nothing.
        while answers.count < 21 {
            let line = try c.readLine()
            if let n = line["id"]?.intValue { answers[n] = line }
        }
        #expect((1...19).allSatisfy { answers[$0]?["result"]?["path"] != nil })
        try c.send(#"{"jsonrpc":"2.0","id":101,"method":"images.cancel","params":{"requestID":20}}"# + "\n")
        #expect(try Self.answer(c, id: 101).response["result"]?["cancelled"]?.boolValue == false)

        // Three connections ask for one new image at once: one render.
        let before = try daemon.call("library.status")["images"]?["rendered"]?.intValue ?? 0
        let clients = try (0..<3).map { _ in try RawClient(daemon.socket) }
        for (k, client) in clients.enumerated() { try Self.request(client, id: 1, asset: id, size: [640, 640], mode: k == 0 ? "fit" : "fit") }
        let paths = try clients.map { try Self.answer($0, id: 1).response["result"]?["path"]?.stringValue }
        #expect(Set(paths).count == 1 && paths[0] != nil)
        let status = try daemon.call("library.status")["images"]
        #expect(status?["rendered"]?.intValue == before + 1)

        // A client that leaves with requests waiting: they are dropped, the daemon goes on.
        do {
            let leaver = try RawClient(daemon.socket)
            for n in 1...10 { try Self.request(leaver, id: n, asset: id, size: [2000 + n, 2000]) }
        }
        try Self.request(c, id: 200, asset: id, size: [64, 64])
        #expect(try Self.answer(c, id: 200).response["result"] != nil)
        #expect(daemon.stop() == 0)
    }

    @Test("A changed file gets a new image and the old one goes; a removed asset's images go; the cache stays under its cap")
    func invalidationAndEviction() throws {
        let lib = try TemporaryDirectory("img-inv-lib")
        let state = try TemporaryDirectory("img-inv")
        defer { lib.remove(); state.remove() }
        for i in 0..<12 { try lib.write("p\(i).jpg", try Self.photo(width: 2400, height: 1600, orientation: 1)) }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state, arguments: ["--cache-size", "1M"])
        try daemon.waitForIdle()
        let library = PhotoLibrary(socket: daemon.socket)
        let id = try Self.asset(daemon, named: "p0.jpg")
        let old = try library.requestImage(for: id, width: 512, height: 512)
        #expect(access(old.path.string, F_OK) == 0)

        // The file changes (a new edit saved over it): a new image, the old file removed.
        try lib.write("p0.jpg", try Self.photo(width: 1600, height: 2400, orientation: 1))
        try daemon.waitFor("the new edit read") { _ in try daemon.allAssets().first { $0["id"]?.stringValue == id }?["pixelWidth"]?.intValue == 1600 }
        try daemon.waitForIdle()
        let new = try library.requestImage(for: id, width: 512, height: 512)
        #expect(new.path != old.path)
        #expect(new.width < new.height, "the new file is portrait: \(new)")
        #expect(access(old.path.string, F_OK) != 0)

        // The asset leaves the library: its images go.
        try FileManager.default.removeItem(atPath: lib("p0.jpg").string)
        try eventually("the removed asset's image gone", timeout: .seconds(20)) { access(new.path.string, F_OK) != 0 }

        // Renders of noise (~250 KB each) for the other eleven: the cache keeps under 1 MiB by evicting.
        var rng = SplitMix64(seed: 7)
        let noise = RenderedImage(size: PixelSize(width: 640, height: 480), channels: 3,
                                  pixels: (0..<640 * 480 * 3).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        for i in 1..<12 { try lib.write("p\(i).jpg", try noise.encodeJPEG(quality: 95).bytes) }
        try daemon.waitFor("the eleven read again") { _ in try daemon.allAssets().filter { $0["pixelWidth"]?.intValue == 640 }.count == 11 }
        try daemon.waitForIdle()
        for i in 1..<12 { _ = try library.requestImage(for: try Self.asset(daemon, named: "p\(i).jpg"), width: 640, height: 640) }
        let images = try #require(try daemon.call("library.status")["images"])
        #expect((images["cacheBytes"]?.intValue ?? .max) <= 1 << 20, "\(images)")
        #expect((images["evictions"]?.intValue ?? 0) > 0, "\(images)")
        var onDisk = 0
        let walker = FileManager.default.enumerator(atPath: state("cache").string)
        while let name = walker?.nextObject() as? String {
            if name.hasSuffix(".jpg") { onDisk += (try? FileManager.default.attributesOfItem(atPath: state("cache").string + "/" + name)[.size] as? Int) ?? 0 }
        }
        #expect(onDisk <= 1 << 20, "\(onDisk) bytes of images on disk")
        #expect(daemon.stop() == 0)
    }

    @Test("An unmounted library still shows the images made of it; a size never made is a clear error")
    func offlineRoot() throws {
        let base = try TemporaryDirectory("img-off")
        defer { base.remove() }
        try base.write("lib/p.jpg", try Self.photo(width: 1200, height: 800, orientation: 1))
        let daemon = try DaemonProcess(libraries: [base("lib")], state: base)
        try daemon.waitForIdle()
        let id = try Self.asset(daemon, named: "p.jpg")
        let library = PhotoLibrary(socket: daemon.socket)
        let made = try library.requestImage(for: id, width: 128, height: 128)
        // The disk goes away (the root moved off): the index keeps the asset, unavailable.
        #expect(rename(base("lib").string, base("away").string) == 0)
        try daemon.waitFor("the root unavailable", timeout: .seconds(20)) { $0["roots"]?[0]?["state"]?.stringValue == "unavailable" }
        let offline = try library.requestImage(for: id, width: 128, height: 128)
        #expect(offline.path == made.path)
        #expect(access(offline.path.string, R_OK) == 0)
        // A size never made cannot be: a clear error.
        let c = try RawClient(daemon.socket)
        try Self.request(c, id: 1, asset: id, size: [64, 64])
        #expect(try Self.answer(c, id: 1).response["error"]?["data"]?["reason"]?.stringValue == "unreadable")
        #expect(daemon.stop() == 0)
    }

    @Test("startCaching pre-renders in the background, then requests are cache hits; stopCaching drops what is left")
    func preCaching() throws {
        let lib = try TemporaryDirectory("img-pre-lib")
        let state = try TemporaryDirectory("img-pre")
        defer { lib.remove(); state.remove() }
        for i in 0..<6 { try lib.write("p\(i).jpg", try Self.photo(width: 1200, height: 800, orientation: 1)) }
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let ids = try (0..<6).map { try Self.asset(daemon, named: "p\($0).jpg") }
        let library = PhotoLibrary(socket: daemon.socket)
        let started = try library.startCachingImages(for: ids + ["a_aaaaaaaaaaaaaaaaaaaa"], width: 300, height: 300)
        #expect(started.queued == 6)
        #expect(started.skipped == ["a_aaaaaaaaaaaaaaaaaaaa"])
        try daemon.waitFor("six pre-rendered") { ($0["images"]?["preRendered"]?.intValue ?? 0) >= 6 }
        #expect(try library.startCachingImages(for: ids, width: 300, height: 300).cached == 6)
        for id in ids { _ = try library.requestImage(for: id, width: 300, height: 300) }
        #expect(try daemon.call("library.status")["images"]?["cacheHits"]?.intValue == 6)
        // A big batch, stopped at once: nothing left for this client.
        _ = try library.startCachingImages(for: ids, width: 1100, height: 1100)
        let stopped = try library.stopCachingImages()
        #expect(stopped <= 6)
        #expect(try library.stopCachingImages() == 0)
        #expect(daemon.stop() == 0)
    }

    @Test("An opportunistic stand-in is sent only when it is smaller than the final image; fast takes what is at hand")
    func standInOnlyWhenSmaller() throws {
        let lib = try TemporaryDirectory("img-small-lib")
        let state = try TemporaryDirectory("img-small")
        defer { lib.remove(); state.remove() }
        try lib.write("photos/p0.jpg", try Self.photo(width: 1200, height: 800, orientation: 6))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let id = try Self.asset(daemon, named: "p0.jpg")
        let c = try RawClient(daemon.socket)
        func degraded(_ n: Int, _ size: [Int]) throws -> (final: JSONValue, standIn: JSONValue?) {
            try Self.request(c, id: n, asset: id, size: size, delivery: "opportunistic")
            let (response, before) = try Self.answer(c, id: n)
            let final = try #require(response["result"], "\(response)")
            return (final, before.first { $0["method"]?.stringValue == "images.degraded" }?["params"])
        }
        // Shown 800×1200: 64×64 gives 43×64, smaller than the 107×160 EXIF thumbnail: none sent.
        let small = try degraded(1, [64, 64])
        #expect(small.standIn == nil, "\(small.standIn ?? .null)")
        #expect(small.final["height"]?.intValue == 64)
        // 512×512 gives 341×512: the thumbnail is smaller, and comes first.
        let large = try degraded(2, [512, 512])
        #expect(large.standIn?["width"]?.intValue == 107 && large.standIn?["height"]?.intValue == 160, "\(large.standIn ?? .null)")
        // 128×128 gives 85×128: of what is cached (the thumbnail, 341×512, 43×64) only the 43×64 is smaller.
        let middle = try degraded(3, [128, 128])
        #expect(middle.standIn?["height"]?.intValue == 64, "\(middle.standIn ?? .null)")
        // 40×40 gives 27×40: nothing cached is smaller (the thumbnail, cached, is not looked for again).
        let tiny = try degraded(4, [40, 40])
        #expect(tiny.standIn == nil)
        // Fast answers at once with whatever is at hand, larger or not.
        try Self.request(c, id: 5, asset: id, size: [30, 30], delivery: "fast")
        let fast = try #require(try Self.answer(c, id: 5).response["result"])
        #expect(fast["isDegraded"]?.boolValue == true)
        #expect(daemon.stop() == 0)
    }

    @Test("A JPEG with stray bytes between segments is sized and rendered; one whose height waits for DNL is an asset whose images fail undecodable")
    func jpegsRealFilesCarry() throws {
        let lib = try TemporaryDirectory("img-quirks-lib")
        let state = try TemporaryDirectory("img-quirks")
        defer { lib.remove(); state.remove() }
        let plain = try Self.pattern(width: 300, height: 200).encodeJPEG(quality: 90).bytes
        try lib.write("scans/stray.jpg", JPEGEdit.insertingStrayBytes(plain, before: 0xC0))
        try lib.write("scans/dnl.jpg", JPEGEdit.deferringHeightToDNL(plain))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let all = try daemon.allAssets()
        func asset(_ name: String) -> JSONValue? { all.first { $0["path"]?.stringValue?.hasSuffix("/" + name) == true } }
        let stray = try #require(asset("stray.jpg"), "\(all)")
        #expect(stray["pixelWidth"]?.intValue == 300 && stray["pixelHeight"]?.intValue == 200, "\(stray)")
        let dnl = try #require(asset("dnl.jpg"), "the DNL JPEG is not an asset: \(all)")
        #expect(dnl["pixelWidth"]?.intValue == 300 && dnl["pixelHeight"]?.intValue == 200, "\(dnl)")
        #expect(try daemon.call("library.errors")["errors"]?.arrayValue?.isEmpty == true)

        let c = try RawClient(daemon.socket)
        try Self.request(c, id: 1, asset: try #require(stray["id"]?.stringValue), size: [150, 150])
        let image = try #require(try Self.answer(c, id: 1).response["result"])
        #expect(image["width"]?.intValue == 150 && image["height"]?.intValue == 100, "\(image)")
        let (_, quadrants) = try Self.inspect(try #require(image["path"]?.stringValue))
        #expect(Self.near(quadrants[0], [220, 30, 30]) && Self.near(quadrants[3], [240, 240, 240]), "\(quadrants)")

        try Self.request(c, id: 2, asset: try #require(dnl["id"]?.stringValue), size: [150, 150])
        let failure = try #require(try Self.answer(c, id: 2).response["error"])
        #expect(failure["code"]?.intValue == -32008, "\(failure)")
        #expect(failure["data"]?["reason"]?.stringValue == "undecodable", "\(failure)")
        #expect(failure["message"]?.stringValue?.contains("DNL") == true || failure["data"]?["detail"]?.stringValue?.contains("DNL") == true,
                "\(failure)")
        #expect(daemon.stop() == 0)
    }

    @Test("A HEIC photo's thumbnail item is its stand-in (a PNG when transparent); the final image is never its own stand-in")
    func heifThumbnailStandIn() throws {
        let lib = try TemporaryDirectory("img-heif-lib")
        let state = try TemporaryDirectory("img-heif")
        defer { lib.remove(); state.remove() }
        try lib.write("phone/IMG_0001.HEIC", try HEIFFixture().bytes())
        try lib.write("phone/sticker.heic", try HEIFFixture(alpha: true).bytes())
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)

        // Fast with nothing cached: the 320×240 thumbnail item at once.
        let id = try Self.asset(daemon, named: "IMG_0001.HEIC")
        try Self.request(c, id: 1, asset: id, size: [512, 512], delivery: "fast")
        let fast = try #require(try Self.answer(c, id: 1).response["result"])
        #expect(fast["isDegraded"]?.boolValue == true)
        #expect(fast["width"]?.intValue == 320 && fast["height"]?.intValue == 240, "\(fast)")
        let standIn = try #require(fast["path"]?.stringValue)
        #expect(standIn.contains("-exif=") && standIn.hasSuffix(".jpg"), "\(standIn)")
        // Opportunistic: that stand-in first, then the render (640×480 fits 512×512 as 512×384).
        try Self.request(c, id: 2, asset: id, size: [512, 512], delivery: "opportunistic")
        let (first, before) = try Self.answer(c, id: 2)
        let final = try #require(first["result"], "\(first)")
        let degraded = try #require(before.first { $0["method"]?.stringValue == "images.degraded" }, "no degraded image before the final one")
        #expect(degraded["params"]?["path"]?.stringValue == standIn)
        #expect(final["isDegraded"]?.boolValue == false)
        #expect(final["width"]?.intValue == 512 && final["height"]?.intValue == 384, "\(final)")
        // The stand-in looks like the final image (upright, same colours).
        let (_, a) = try Self.inspect(standIn)
        let (_, b) = try Self.inspect(try #require(final["path"]?.stringValue))
        #expect(zip(a, b).allSatisfy { Self.near($0, $1) }, "\(a) vs \(b)")
        // Once the final image is cached, the same request is a hit, never a stand-in of itself.
        try Self.request(c, id: 3, asset: id, size: [512, 512], delivery: "fast")
        let hit = try #require(try Self.answer(c, id: 3).response["result"])
        #expect(hit["isDegraded"]?.boolValue == false && hit["path"] == final["path"])

        // Transparent: the stand-in keeps its transparency (PNG), as the final image does.
        let sticker = try Self.asset(daemon, named: "sticker.heic")
        try Self.request(c, id: 4, asset: sticker, size: [512, 512], delivery: "opportunistic")
        let (stickerFinal, stickerBefore) = try Self.answer(c, id: 4)
        let stickerStandIn = try #require(stickerBefore.first { $0["method"]?.stringValue == "images.degraded" }?["params"]?["path"]?.stringValue)
        #expect(stickerStandIn.hasSuffix(".png"), "\(stickerStandIn)")
        #expect(stickerFinal["result"]?["path"]?.stringValue?.hasSuffix(".png") == true, "\(stickerFinal)")
        let corner = try ImageRenderer().render(path: PathBytes(stickerStandIn), targetSize: PixelSize(width: 64, height: 64),
                                                contentMode: .fit)
        #expect(corner.hasTransparency && corner.pixel(x: 0, y: 0)[3] < 30)
        #expect(daemon.stop() == 0)
    }

    @Test("A RAW alone is drawn from its embedded preview when that covers the request, else developed with the preview standing in first; a RAW+JPEG pair draws its JPEG")
    func rawFiles() throws {
        let lib = try TemporaryDirectory("img-raw-lib")
        let state = try TemporaryDirectory("img-raw")
        defer { lib.remove(); state.remove() }
        // A 1200×800 sensor turned by orientation 6 (shown 800×1200), with a 320×213 preview.
        let preview = DNGFixture.Preview(jpeg: try Self.pattern(width: 320, height: 213).encodeJPEG(quality: 90).bytes, width: 320, height: 213)
        let dng = DNGFixture(width: 1200, height: 800, rgb: Self.pattern(width: 1200, height: 800).pixels, orientation: 6, preview: preview).bytes()
        try lib.write("raw/IMG_0001.DNG", dng)
        try lib.write("pair/IMG_0002.DNG", dng)
        try lib.write("pair/IMG_0002.JPG", try Self.photo(width: 600, height: 400, orientation: 1))
        let daemon = try DaemonProcess(libraries: [lib.path], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)
        let raw = try Self.asset(daemon, named: "IMG_0001.DNG")

        // 1024 px, nothing cached: developed (683×1024); the preview (213×320) comes first.
        try Self.request(c, id: 2, asset: raw, size: [1024, 1024], delivery: "opportunistic")
        let (answer, before) = try Self.answer(c, id: 2)
        let large = try #require(answer["result"], "\(answer)")
        #expect(large["width"]?.intValue == 683 && large["height"]?.intValue == 1024, "\(large)")
        #expect(large["isDegraded"]?.boolValue == false)
        let degraded = try #require(before.first { $0["method"]?.stringValue == "images.degraded" }, "no stand-in before the developed image")
        #expect(degraded["params"]?["width"]?.intValue == 213 && degraded["params"]?["height"]?.intValue == 320, "\(degraded)")
        // Both upright with the pattern's colours where the final image has them.
        let (_, a) = try Self.inspect(try #require(degraded["params"]?["path"]?.stringValue))
        let (_, b) = try Self.inspect(try #require(large["path"]?.stringValue))
        #expect(zip(a, b).allSatisfy { Self.near($0, $1) }, "\(a) vs \(b)")
        // 256 px: the preview covers it (shown 213×320, fit 170×256; from the sensor it would be 171×256).
        try Self.request(c, id: 1, asset: raw, size: [256, 256])
        let small = try #require(try Self.answer(c, id: 1).response["result"])
        #expect(small["width"]?.intValue == 170 && small["height"]?.intValue == 256, "\(small)")

        // The pair's asset is its JPEG (landscape 600×400), not the portrait RAW.
        let pair = try Self.asset(daemon, named: "IMG_0002.JPG")
        try Self.request(c, id: 3, asset: pair, size: [256, 256])
        let jpeg = try #require(try Self.answer(c, id: 3).response["result"])
        #expect(jpeg["width"]?.intValue == 256 && jpeg["height"]?.intValue == 171, "\(jpeg)")
        #expect(daemon.stop() == 0)
    }

    @Test("Every image and video of the real corpus gets an image (a video its poster) or a clear error over the socket",
          .enabled(if: TestPaths.corpus != nil, Comment(rawValue: CorpusTests.absent)))
    func realCorpus() throws {
        let corpus = try #require(TestPaths.corpus)
        let state = try TemporaryDirectory("img-corpus")
        defer { state.remove() }
        let daemon = try DaemonProcess(libraries: [PathBytes(corpus.appendingPathComponent("real").path)], state: state)
        try daemon.waitForIdle()
        let c = try RawClient(daemon.socket)
        var outcomes: [String: Int] = [:]
        var posters: [String] = []
        let all = try daemon.allAssets()
        for (n, asset) in all.enumerated() {
            try Self.request(c, id: n, asset: asset["id"]!.stringValue!, size: [512, 512], mode: n % 2 == 0 ? "fit" : "fill")
            let answer = try Self.answer(c, id: n).response
            if let result = answer["result"] {
                let w = result["width"]?.intValue ?? 0, h = result["height"]?.intValue ?? 0
                #expect(w <= 512 && h <= 512 && w > 0 && h > 0, "\(asset["path"] ?? .null): \(result)")
                #expect(access(result["path"]?.stringValue ?? "", R_OK) == 0)
                outcomes["image", default: 0] += 1
                if asset["mediaType"]?.stringValue == "video" { posters.append(asset["path"]!.stringValue!) }
            } else {
                let name = answer["error"]?["data"]?["name"]?.stringValue ?? "?"
                #expect(name == "unsupported" || name == "imageFailed", "\(asset["path"] ?? .null): \(answer)")
                outcomes[name, default: 0] += 1
            }
        }
        print("corpus images over the socket: \(outcomes); video posters: \(posters.count)")
        #expect((outcomes["image"] ?? 0) >= 146)
        // Every corpus video with a decodable frame (VideoPosterTests holds that list to
        // ffmpeg's), and QuickTime.mov by its cover picture.
        let names = Set(posters.map { String($0.split(separator: "/").last!) })
        #expect(names.isSuperset(of: ["with-gps.mov", "with-gps.mp4", "sample_mpeg4.mp4", "sample.3gp", "webm.webm", "QuickTime.mov"]),
                "\(names.sorted())")
        #expect(daemon.stop() == 0)
    }
}
