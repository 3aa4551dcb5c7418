import Foundation
import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// What a file's bytes say of how it was made (`MediaTraits`): HDR, a depth map, animation.
@Suite("Traits: HDR, depth maps, animation")
struct TraitsTests {
    /// An `Apple iOS` maker note with HDRImageType (tag 0x0A, SLONG) = `hdrType`.
    static func appleNote(hdrType: Int) -> [UInt8] {
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
        note += Build.be16(1) + Build.be16(0x0A) + Build.be16(9) + Build.be32(1) + Build.be32(hdrType)
        return note + Build.be32(0)
    }

    @Test("Apple's MakerNote HDRImageType 3 is an HDR capture; 4 (the normal exposure kept beside it) is not")
    func appleHDR() throws {
        for (type, hdr) in [(3, true), (4, false), (0, false)] {
            let exif = ExifFixture(byteOrder: .big, make: "Apple", extraExif: [.init(0x927C, .undefined(Self.appleNote(hdrType: type)))])
            let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
            #expect(m.traits.contains(.hdr) == hdr, "HDRImageType \(type)")
        }
        // The same note under another make is not read as Apple's.
        let other = ExifFixture(byteOrder: .big, make: "Canon", extraExif: [.init(0x927C, .undefined(Self.appleNote(hdrType: 3)))])
        #expect(try Build.read(JPEGFixture.make(width: 8, height: 8, exif: other)).traits.isEmpty)
    }

    @Test("Apple's MakerNote BurstUUID names the photo's burst; beside HDRImageType and ContentIdentifier")
    func appleBurst() throws {
        let burst = "6A2F1C3E-8D4B-4F1A-9C2E-7B5D3A1F0E9C", content = "8A3B2C1D-0000-4E5F-9A8B-1C2D3E4F5A6B"
        var note = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
        let table = 14 + 2 + 3 * 12 + 4
        note += Build.be16(3)
        note += Build.be16(0x0A) + Build.be16(9) + Build.be32(1) + Build.be32(4)
        note += Build.be16(0x0B) + Build.be16(2) + Build.be32(burst.utf8.count + 1) + Build.be32(table)
        note += Build.be16(0x11) + Build.be16(2) + Build.be32(content.utf8.count + 1) + Build.be32(table + burst.utf8.count + 1)
        note += Build.be32(0) + Array(burst.utf8) + [0] + Array(content.utf8) + [0]
        let exif = ExifFixture(byteOrder: .big, make: "Apple", extraExif: [.init(0x927C, .undefined(note))])
        let m = try Build.read(JPEGFixture.make(width: 8, height: 8, exif: exif))
        #expect(m.burstIdentifier == burst && m.contentIdentifier == content && m.traits.isEmpty)
        #expect(try Build.read(JPEGFixture.make(width: 8, height: 8, exif: ExifFixture(make: "Apple"))).burstIdentifier == nil)
    }

    static func xmpJPEG(_ packet: String) -> [UInt8] {
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(packet.utf8)
        return JPEGFixture(width: 8, height: 8, leadingSegments: [.init(marker: 0xE1, payload: payload)]).bytes()
    }

    @Test("XMP: an Ultra HDR gain map is HDR, Google's depth map and a Dynamic Depth item are depth; other XMP is neither")
    func xmpMarkers() throws {
        let ultraHDR = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/></rdf:RDF></x:xmpmeta>
            """
        let container = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" xmlns:Item="http://ns.google.com/photos/1.0/container/item/">
            <Container:Directory><rdf:Seq><rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>
            <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="1234"/></rdf:li>
            </rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let gdepth = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:GDepth="http://ns.google.com/photos/1.0/depthmap/" GDepth:Format="RangeInverse" GDepth:Near="0.5"
             GDepth:Far="3.2" GDepth:Mime="image/jpeg" xmpNote:HasExtendedXMP="0123"/></rdf:RDF></x:xmpmeta>
            """
        let dynamicDepth = container.replacingOccurrences(of: "\"GainMap\"", with: "\"Depth\"")
        let plain = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3" xmp:CreatorTool="HDR Efex Pro"/></rdf:RDF></x:xmpmeta>
            """
        let cases: [(String, String, MediaTraits)] = [("ultra HDR", ultraHDR, .hdr), ("gain-map item", container, .hdr),
                                                       ("GDepth", gdepth, .depth), ("Dynamic Depth", dynamicDepth, .depth),
                                                       ("plain", plain, [])]
        for (name, packet, expected) in cases {
            #expect(try Build.read(Self.xmpJPEG(packet)).traits == expected, "\(name)")
        }
    }

    @Test("HEIC auxiliary images: Apple's gain map is HDR, a depth or disparity map is depth; a matte or an alpha plane is neither; an AVIF tmap item is HDR")
    func heifAuxiliary() throws {
        func auxC(_ urn: String) -> [UInt8] { Build.fullBox("auxC", Array(urn.utf8) + [0]) }
        let cases: [(String, MediaTraits)] = [
            ("urn:com:apple:photo:2020:aux:hdrgainmap", .hdr), ("urn:mpeg:hevc:2015:auxid:2", .depth),
            ("urn:mpeg:mpegB:cicp:systems:auxiliary:depth", .depth), ("urn:com:apple:photo:2018:aux:disparity", .depth),
            ("urn:com:apple:photo:2018:aux:portraiteffectsmatte", []), ("urn:mpeg:hevc:2015:auxid:1", []),
            ("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha", []),
        ]
        for (urn, expected) in cases {
            let m = try Build.read(Build.heif(width: 64, height: 48, exif: nil, properties: auxC(urn)))
            #expect(m.traits == expected && m.pixelWidth == 64, "\(urn): \(m.traits)")
        }
        #expect(try Build.read(Build.heif(width: 64, height: 48, exif: nil)).traits.isEmpty)
    }

    /// A GIF of `frames` 1×1 frames, with a NETSCAPE2.0 looping extension when `looping`.
    static func gif(frames: Int, looping: Bool, trailer: Bool = true) -> [UInt8] {
        var b = Array("GIF89a".utf8) + Build.le16(1) + Build.le16(1) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        if looping { b += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0] }
        for _ in 0..<frames {
            b += [0x21, 0xF9, 4, 0, 10, 0, 0, 0]  // graphic control
            b += [0x2C] + Build.le16(0) + Build.le16(0) + Build.le16(1) + Build.le16(1) + [0]
            b += [2, 2, 0x4C, 0x01, 0]  // LZW code size 2, one sub-block, end
        }
        return b + (trailer ? [0x3B] : [])
    }

    @Test("Animation: a GIF of more than one frame (walked block by block), an APNG whose acTL says more than one, an animated WebP; one frame is not animated")
    func animation() throws {
        #expect(try Build.read(Self.gif(frames: 2, looping: false)).traits == .animated)
        #expect(try Build.read(Self.gif(frames: 5, looping: true)).traits == .animated)
        #expect(try Build.read(Self.gif(frames: 1, looping: true)).traits.isEmpty)
        #expect(try Build.read(Self.gif(frames: 1, looping: false)).traits.isEmpty)
        #expect(try Build.read(Self.gif(frames: 1, looping: false, trailer: false)).traits.isEmpty)
        // Cut inside its first image descriptor: one frame, not two.
        let single = Self.gif(frames: 1, looping: false)
        let descriptor = try #require((13..<single.count).first { single[$0] == 0x2C })
        #expect(try Build.read(Array(single.prefix(descriptor + 5))).traits.isEmpty)
        // PNG with acTL num_frames 3 and 1.
        for (frames, animated) in [(3, true), (1, false)] {
            var png = PNGFixture(width: 4, height: 4).bytes()
            let ihdrEnd = 8 + 25
            let actl = Build.be32(8) + Array("acTL".utf8) + Build.be32(frames) + Build.be32(0) + Build.be32(0)
            png.insert(contentsOf: actl, at: ihdrEnd)
            let m = try Build.read(png)
            #expect(m.format == .apng && m.traits.contains(.animated) == animated, "acTL \(frames)")
        }
        // WebP: VP8X, two ANMF frames; one.
        func webp(frames: Int) -> [UInt8] {
            var chunks = Build.chunk("VP8X", [0x02, 0, 0, 0] + [7, 0, 0] + [7, 0, 0])
            chunks += Build.chunk("ANIM", [0, 0, 0, 0, 0, 0])
            for _ in 0..<frames { chunks += Build.chunk("ANMF", [UInt8](repeating: 0, count: 16)) }
            return Build.riff("WEBP", chunks)
        }
        #expect(try Build.read(webp(frames: 2)).traits == .animated)
        #expect(try Build.read(webp(frames: 1)).traits.isEmpty)
    }

    static let ffmpeg = VideoFixtures.ffmpeg

    @Test("Animations ffmpeg writes: GIF, APNG, animated WebP; their single-frame forms are not animated",
          .enabled(if: ffmpeg != nil, "ffmpeg is not installed (scripts/install-deps --tests)"))
    func madeAnimations() throws {
        let dir = try TemporaryDirectory("traits-anim")
        defer { dir.remove() }
        let source = ["-f", "lavfi", "-i", "testsrc=size=32x24:rate=10"]
        let made: [(String, [String])] = [("a.gif", []), ("a.apng", ["-f", "apng", "-plays", "0"]), ("a.webp", ["-c:v", "libwebp_anim", "-loop", "0"])]
        for (name, options) in made {
            for frames in [3, 1] {
                let path = dir("\(frames)-\(name)")
                try VideoFixtures.ffmpeg(source + ["-frames:v", String(frames)] + options + [path.string])
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path.string)))
                let m = try Build.read(bytes, name: name)
                #expect(m.traits.contains(.animated) == (frames > 1), "\(frames) frames of \(name): \(m.format) \(m.traits)")
            }
        }
    }

    /// The corpus's files with a trait, by path. Each was checked with exiftool: the iPhone 13
    /// Pro Max HEIC carries Apple's HDR gain map (`AuxiliaryImageType
    /// urn:com:apple:photo:2020:aux:hdrgainmap`), the Pixel 8 Pro JPEG an Ultra HDR gain map
    /// (`hdrgm:Version 1.0`, a `GainMap` container item), the iPhone 7 HEIC Apple's
    /// `HDRImageType` "HDR Image". No other file has HDRImageType, a gain map, a depth map or
    /// more than one frame (exiftool's FrameCount).
    static let corpusTraits: [String: MediaTraits] = [
        "exiftool/t/images/Google.jpg": .hdr,
        "ianare-exif-samples/heic/mobile/iphone_13_pro_max.HEIC": .hdr,
        "immich-test-assets/formats/heic/IMG_2682.heic": .hdr,
    ]

    @Test("The corpus: each trait on exactly the files that carry it", .enabled(if: Corpus.root != nil, Comment(rawValue: Corpus.skipReason)))
    func corpus() throws {
        let root = Corpus.root!.appendingPathComponent("real")
        var found: [String: MediaTraits] = [:]
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])! {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                  let (meta, _) = try? Corpus.read(url), !meta.traits.isEmpty else { continue }
            found[String(url.path.dropFirst(root.path.count + 1)), default: []].formUnion(meta.traits)
        }
        print("corpus traits: " + found.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)" }.joined(separator: ", "))
        #expect(found == Self.corpusTraits)
    }
}
