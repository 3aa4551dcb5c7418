import CExif
@testable import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// photod decodes the EXIF entries its TIFF walk keeps by itself; until 2026-12 it handed them to
/// libexif 0.6.24 in a compact block repacked from the same entries. libexif stays here as the
/// oracle: on every block, the fields photod reads are the ones libexif's entries give.
@Suite struct LibExifOracleTests {
    /// libexif reads no further than 0xFFFE bytes into a block (photod reads on: `ExifReader`).
    static let libexifReach = 0xFFFE

    /// The fields from libexif's entries of the repacked block (what photod read before).
    static func libexifFields(_ layout: TIFFLayout) -> ExifFields {
        if layout.isEmpty { return ExifFields() }
        let block = TIFFRepacker.pack(layout)
        guard let data = exif_data_new() else { return ExifFields() }
        defer { exif_data_unref(data) }
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        block.withUnsafeBufferPointer { exif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }
        let little = exif_data_get_byte_order(data) == EXIF_BYTE_ORDER_INTEL
        let ifd = data.pointee.ifd
        return ExifFields { kind, tag in
            let content: UnsafeMutablePointer<ExifContent>?
            switch kind {
            case .ifd0, .image: content = ifd.0
            case .exif: content = ifd.2
            case .gps: content = ifd.3
            }
            guard let content, let e = exif_content_get_entry(content, ExifTag(rawValue: UInt32(tag))),
                  let bytes = e.pointee.data, e.pointee.size > 0 else { return nil }
            return EntryValue(format: Int(e.pointee.format.rawValue), components: Int(e.pointee.components),
                              data: ByteView(Array(UnsafeBufferPointer(start: bytes, count: Int(e.pointee.size)))), little: little)
        }
    }

    static func layout(_ tiff: [UInt8]) -> TIFFLayout? {
        guard var walker = try? TIFFWalker(store: MemoryTIFF(block: ByteView(tiff))) else { return nil }
        return try? walker.walk(.exif)
    }

    /// Structures that bend the rules: both byte orders, SRATIONAL GPS, dates in IFD0, a tag
    /// twice, types TIFF does not define, empty values, a lying thumbnail pointer.
    static let bases: [[UInt8]] = {
        var list: [[UInt8]] = []
        for order in [FixtureByteOrder.little, .big] {
            var full = ExifTests.full
            full.byteOrder = order
            list.append(full.bytes())
            var odd = full
            // Make, Model, Software and DateTime only as the odd entries below, so that those decide.
            odd.make = nil
            odd.model = nil
            odd.software = nil
            odd.dateTime = nil
            odd.gps = GPSFixture(latitude: -33.8688, longitude: -70.6483, altitude: -4.25, signedRationals: true)
            odd.extraIFD0 = [
                .init(0x9003, .ascii("2001:02:03 04:05:06")),          // DateTimeOriginal in IFD0
                .init(0x010F, .raw(type: 2, count: 0, field: 0)),      // Make with no bytes, then twice:
                .init(0x010F, .ascii("First Make")),                   // the first loadable counts
                .init(0x010F, .ascii("Second Make")),
                .init(0x0110, .raw(type: 13, count: 1, field: 8)),     // Model as an IFD offset, then
                .init(0x0110, .ascii("Model Two")),                    // as text
                .init(0x0131, .raw(type: 0, count: 4, field: 0x41414141)), // Software of type 0
                .init(0x0132, .raw(type: 2, count: 0, field: 0)),      // DateTime with no bytes
                .init(0x0201, .raw(type: 4, count: 1, field: 0x00FF_FFFF)),
            ]
            odd.extraExif = [.init(0xA434, .undefined(Array("Lens\0".utf8))), .init(0x9291, .short([7]))]
            list.append(odd.bytes())
        }
        return list
    }()

    @Test func agreesOnTheFixtures() {
        for (i, base) in Self.bases.enumerated() {
            guard let layout = Self.layout(base) else { Issue.record("base \(i) has no layout"); continue }
            #expect(!layout.isEmpty)
            #expect(ExifReader.decode(layout: layout) == Self.libexifFields(layout), "base \(i)")
        }
        // The odd bases' Make and Model: the first entries libexif would load.
        let odd = ExifReader.decode(layout: Self.layout(Self.bases[1])!)
        #expect(odd.make == "First Make" && odd.model == "Model Two")
    }

    /// Past libexif's reach photod reads on: a 65,400-byte UserComment (as tools that keep their
    /// settings in EXIF write) put the GPS IFD beyond 0xFFFE bytes of the block libexif was given.
    @Test func readsPastLibexifsReach() throws {
        var exif = ExifTests.full
        exif.userComment = String(repeating: "w", count: 65_400)
        let layout = try #require(Self.layout(exif.bytes()))
        #expect(TIFFRepacker.pack(layout).count > Self.libexifReach)
        #expect(Self.libexifFields(layout).latitude == nil, "libexif was expected to miss the GPS IFD")
        let m = try Build.read(PNGFixture(width: 8, height: 8, exif: exif).bytes())
        #expect(m.userComment?.utf8.count == 65_400)
        #expect(abs((m.latitude ?? 0) - -33.8688) < 1e-6 && abs((m.longitude ?? 0) - 151.2093) < 1e-6)
        #expect(m.make == "Canon" && m.dates.gpsUTC != nil)
    }

    /// 4,000 damaged copies: bytes overwritten at random (seeded), so entries change type, count,
    /// offset and order; whatever the walk keeps, both read the same fields from it.
    @Test func agreesOnDamagedBlocks() {
        var rng = SplitMix64(state: 20_261_206)
        var compared = 0
        for round in 0..<4000 {
            var bytes = Self.bases[round % Self.bases.count]
            for _ in 0..<(1 + round % 8) {
                let at = Int.random(in: 8..<bytes.count, using: &rng)
                bytes[at] = round % 3 == 0 ? UInt8.random(in: 0...0x0D, using: &rng) : UInt8.random(in: 0...255, using: &rng)
            }
            guard let layout = Self.layout(bytes), !layout.isEmpty,
                  TIFFRepacker.pack(layout).count <= Self.libexifReach else { continue }
            compared += 1
            let ours = ExifReader.decode(layout: layout), theirs = Self.libexifFields(layout)
            #expect(ours == theirs, "round \(round)")
            if ours != theirs { break }
        }
        #expect(compared > 3000)
    }
}

/// Builds a compact TIFF structure (with the `Exif\0\0` prefix libexif expects) from the
/// entries a walk kept: IFD0, an ExifIFD and a GPS IFD, sorted, every offset valid. The block
/// is sized first and written in one allocation.
enum TIFFRepacker {
    static func pack(_ layout: TIFFLayout) -> [UInt8] {
        let exif = layout.exif.sorted { $0.tag < $1.tag }
        let gps = layout.gps.sorted { $0.tag < $1.tag }
        let ifd0 = layout.ifd0.sorted { $0.tag < $1.tag }
        func size(_ entries: [TIFFEntry], extra: Int) -> Int {
            var s = 2 + 12 * (entries.count + extra) + 4
            for e in entries where e.value.count > 4 { s += e.value.count + (e.value.count & 1) }
            return s
        }
        let pointers = (exif.isEmpty ? 0 : 1) + (gps.isEmpty ? 0 : 1)
        // TIFF offsets count from the byte-order mark, which follows the 6-byte prefix.
        let ifd0At = 8
        let exifAt = ifd0At + size(ifd0, extra: pointers)
        let gpsAt = exifAt + (exif.isEmpty ? 0 : size(exif, extra: 0))
        let total = 6 + gpsAt + (gps.isEmpty ? 0 : size(gps, extra: 0))
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var w = BlockWriter(buffer: buffer, little: layout.littleEndian)
            w.bytes([0x45, 0x78, 0x69, 0x66, 0, 0])
            w.bytes(layout.littleEndian ? [0x49, 0x49] : [0x4D, 0x4D])
            w.u16(42)
            w.u32(ifd0At)
            var ptrs: [(UInt16, Int)] = []
            if !exif.isEmpty { ptrs.append((ExifTags.exifPointer, exifAt)) }
            if !gps.isEmpty { ptrs.append((ExifTags.gpsPointer, gpsAt)) }
            w.ifd(ifd0, at: ifd0At, pointers: ptrs)
            if !exif.isEmpty { w.ifd(exif, at: exifAt, pointers: []) }
            if !gps.isEmpty { w.ifd(gps, at: gpsAt, pointers: []) }
            precondition(w.position == total, "repacked EXIF size mismatch")
            initialized = total
        }
    }

    /// Writes into a buffer sized in advance.
    private struct BlockWriter {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        let little: Bool
        var position = 0

        init(buffer: UnsafeMutableBufferPointer<UInt8>, little: Bool) {
            self.buffer = buffer
            self.little = little
        }

        mutating func byte(_ b: UInt8) { buffer[position] = b; position += 1 }
        mutating func bytes(_ b: [UInt8]) { for x in b { byte(x) } }
        mutating func u16(_ v: Int) {
            if little { byte(UInt8(v & 0xFF)); byte(UInt8(v >> 8 & 0xFF)) } else { byte(UInt8(v >> 8 & 0xFF)); byte(UInt8(v & 0xFF)) }
        }
        mutating func u32(_ v: Int) {
            if little { u16(v & 0xFFFF); u16(v >> 16 & 0xFFFF) } else { u16(v >> 16 & 0xFFFF); u16(v & 0xFFFF) }
        }
        mutating func copy(_ v: ByteView) {
            for i in 0..<v.count { byte(v[i]) }
        }

        /// One IFD: the entries (pointers merged in tag order), the next-IFD link (none),
        /// then the values that do not fit in 4 bytes.
        mutating func ifd(_ entries: [TIFFEntry], at start: Int, pointers: [(UInt16, Int)]) {
            let n = entries.count + pointers.count
            u16(n)
            var data = start + 2 + 12 * n + 4
            var p = 0
            var e = 0
            while e < entries.count || p < pointers.count {
                if p < pointers.count, e == entries.count || pointers[p].0 < entries[e].tag {
                    u16(Int(pointers[p].0)); u16(4); u32(1); u32(pointers[p].1)
                    p += 1
                    continue
                }
                let entry = entries[e]
                e += 1
                u16(Int(entry.tag))
                u16(Int(entry.type))
                u32(Int(entry.count))
                if entry.value.count <= 4 {
                    copy(entry.value)
                    for _ in entry.value.count..<4 { byte(0) }
                } else {
                    u32(data)
                    data += entry.value.count + (entry.value.count & 1)
                }
            }
            u32(0)
            for entry in entries where entry.value.count > 4 {
                copy(entry.value)
                if entry.value.count & 1 == 1 { byte(0) }
            }
        }
    }
}
