import PhotoMetadata
import PhotoModel
import PhotoTesting
import Testing

/// Photoshop documents are images: their size from the header, EXIF, XMP and IPTC-IIM from
/// their image resources.
@Suite struct PSDTests {
    static func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(v >> (8 * (n - 1 - $0)) & 0xFF) } }

    static func resource(_ id: Int, _ data: [UInt8]) -> [UInt8] {
        Array("8BIM".utf8) + be(id, 2) + [0, 0] + be(data.count, 4) + data + (data.count % 2 == 1 ? [0] : [])
    }

    static func psd(version: Int = 1, width: Int, height: Int, resources: [UInt8] = []) -> [UInt8] {
        Array("8BPS".utf8) + be(version, 2) + [0, 0, 0, 0, 0, 0] + be(3, 2) + be(height, 4) + be(width, 4) + be(8, 2) + be(3, 2)
            + be(0, 4) + be(resources.count, 4) + resources + be(0, version == 2 ? 8 : 4) + be(0, 2)
            + [UInt8](repeating: 0x80, count: width * height * 3)
    }

    @Test("PSD and PSB are images with their size", arguments: [1, 2])
    func sized(version: Int) throws {
        let m = try Build.read(Self.psd(version: version, width: 30, height: 20), name: "a.psd")
        #expect(m.format == .psd && m.mediaType == .image && m.pixelWidth == 30 && m.pixelHeight == 20)
        #expect(m.format.mimeType == "image/vnd.adobe.photoshop")
    }

    @Test func exifXMPAndIPTCFromTheImageResources() throws {
        let exif = ExifFixture(make: "Canon", orientation: 6, dateTimeOriginal: "2020:01:02 03:04:05")
        let xmp = Array(XMPFixture.packet(rating: 4, keywords: ["k"]).utf8)
        let iptc = IPTCFixture(dateCreated: "20190101", timeCreated: "101010+0100")
        let resources = Self.resource(0x040C, [1, 2, 3]) + Self.resource(0x0422, exif.bytes()) + Self.resource(0x0424, xmp)
            + Self.resource(0x0404, iptc.record())
        let m = try Build.read(Self.psd(width: 8, height: 4, resources: resources), name: "a.psd")
        #expect(m.make == "Canon" && m.orientation == 6 && m.rating == 4 && m.keywords == ["k"], "\(m.warnings)")
        #expect(m.dates.exifOriginal?.local.description == "2020-01-02T03:04:05")
        #expect(m.dates.iptc?.offset?.description == "+01:00")
    }

    @Test func damagedResourcesLeaveTheSize() throws {
        let broken = Array("8BIM".utf8) + [4, 4, 0, 0] + Self.be(1_000, 4) + [1, 2]
        let m = try Build.read(Self.psd(width: 8, height: 4, resources: broken), name: "a.psd")
        #expect(m.pixelWidth == 8 && m.make == nil)
    }
}
