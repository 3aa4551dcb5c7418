import PhotoWire
import Testing

/// Throughput figures, printed rather than asserted (a shared 2-core machine makes timing
/// assertions flaky). Meaningful only in a release build:
/// `swift test -c release --filter PhotoWireTests.Throughput`.
@Suite("Throughput")
struct ThroughputTests {
    #if DEBUG
    static let build = "debug build; run with -c release for real figures"
    static let objectCount = 10_000
    #else
    static let build = "release build"
    static let objectCount = 100_000
    #endif

    /// An asset-like record of 20 fields, as the daemon sends in `assets.fetch` pages.
    static func asset(_ index: Int) -> JSONValue {
        [
            "id": .string("a_\(String(index, radix: 32).padding(20))"),
            "path": .string("/srv/photos/2024/06/IMG_\(index).JPG"),
            "mediaType": "image",
            "subtypes": ["live"],
            "localDateTime": "2024-06-01T12:34:56.789",
            "utcOffset": "+02:00",
            "dateSource": "exifOriginal",
            "pixelWidth": 4032,
            "pixelHeight": 3024,
            "orientation": 1,
            "latitude": .double(52.520008 + Double(index) * 1e-6),
            "longitude": 13.404954,
            "altitude": nil,
            "make": "Apple",
            "model": "iPhone 15 Pro",
            "lensModel": "iPhone 15 Pro back triple camera 6.765mm f/1.78",
            "duration": nil,
            "fileSize": .int(Int64(2_345_678 + index)),
            "isFavorite": false,
            "resources": [["path": .string("/srv/photos/2024/06/IMG_\(index).JPG"), "role": "primary"]],
        ]
    }

    static func rate(_ count: Int, _ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return "\(Int(Double(count) / seconds)) objects/s"
    }

    @Test func serializeAssetPages() throws {
        let count = Self.objectCount
        let assets = (0..<count).map(Self.asset)
        let clock = ContinuousClock()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        var total = 0

        // JSONValue trees, 1,000 per page, into one reused buffer.
        let treeTime = clock.measure {
            for page in stride(from: 0, to: count, by: 1000) {
                buffer.removeAll(keepingCapacity: true)
                RPCResponse.success(id: 1, result: ["token": 1, "assets": .array(Array(assets[page..<page + 1000]))])
                    .write(into: &buffer)
                total += buffer.count
            }
        }

        // The same records through JSONWriter, without trees (what the daemon's mapper can do).
        let writerTime = clock.measure {
            for page in stride(from: 0, to: count, by: 1000) {
                buffer.removeAll(keepingCapacity: true)
                RPCResponse.writeSuccessLine(id: 1, into: &buffer) { writer in
                    writer.beginObject()
                    writer.field("token", 1)
                    writer.key("assets")
                    writer.beginArray()
                    for index in page..<page + 1000 {
                        writer.beginObject()
                        writer.field("id", "a_\(String(index, radix: 32).padding(20))")
                        writer.field("path", "/srv/photos/2024/06/IMG_\(index).JPG")
                        writer.field("mediaType", "image")
                        writer.field("subtypes", ["live"])
                        writer.field("localDateTime", "2024-06-01T12:34:56.789")
                        writer.field("utcOffset", "+02:00")
                        writer.field("dateSource", "exifOriginal")
                        writer.field("pixelWidth", 4032)
                        writer.field("pixelHeight", 3024)
                        writer.field("orientation", 1)
                        writer.field("latitude", 52.520008 + Double(index) * 1e-6)
                        writer.field("longitude", 13.404954)
                        writer.field("altitude", nil as Double?)
                        writer.field("make", "Apple")
                        writer.field("model", "iPhone 15 Pro")
                        writer.field("lensModel", "iPhone 15 Pro back triple camera 6.765mm f/1.78")
                        writer.field("duration", nil as Double?)
                        writer.field("fileSize", Int64(2_345_678 + index))
                        writer.field("isFavorite", false)
                        writer.key("resources")
                        writer.beginArray()
                        writer.beginObject()
                        writer.field("path", "/srv/photos/2024/06/IMG_\(index).JPG")
                        writer.field("role", "primary")
                        writer.endObject()
                        writer.endArray()
                        writer.endObject()
                    }
                    writer.endArray()
                    writer.endObject()
                }
                total += buffer.count
            }
        }

        // Parsing the pages back (what a client does).
        let page = RPCResponse.success(id: 1, result: ["assets": .array(Array(assets[0..<1000]))]).encodedLine()
        let parseTime = try clock.measure {
            for _ in 0..<(count / 1000) { _ = try JSONValue.parse(page) }
        }

        print("PhotoWire throughput (\(Self.build)), \(count) asset records of 20 fields, \(page.count) bytes per 1,000:")
        print("  serialize JSONValue trees: \(Self.rate(count, treeTime))")
        print("  serialize with JSONWriter (building strings per record included): \(Self.rate(count, writerTime))")
        print("  parse pages: \(Self.rate(count, parseTime))")
        #expect(total > 0)
    }

    @Test func frameLargeStreams() {
        let line = Array(String(repeating: "x", count: 200).utf8) + [0x0A]
        var stream: [UInt8] = []
        for _ in 0..<(Self.objectCount / 2) { stream += line }
        var framer = LineFramer()
        let clock = ContinuousClock()
        var lines = 0
        let time = clock.measure {
            var position = 0
            while position < stream.count {
                let end = min(stream.count, position + 65_536)
                lines += framer.append(stream[position..<end]).count
                position = end
            }
        }
        let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
        print("PhotoWire framing (\(Self.build)): \(Int(Double(stream.count) / seconds / 1e6)) MB/s in 201-byte lines")
        #expect(lines == Self.objectCount / 2)
    }
}

private extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
