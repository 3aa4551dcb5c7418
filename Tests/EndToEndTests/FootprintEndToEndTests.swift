import Foundation
import PhotoModel
import PhotoTesting
import Testing

/// What photod maps into memory: FFmpeg's libraries (and the hundred libraries their codecs pull
/// in: libssh, gnutls, libgcrypt, x265...) are opened at the first video, so a daemon serving a
/// library of photos never maps them; libheif (with libde265, x265, libaom, dav1d) at the first
/// HEIF image drawn.
@Suite struct FootprintEndToEndTests {
    /// The whole of /proc/PID/maps, read to its end: `String(contentsOfFile:)` gave only its first
    /// part here (a file whose size says 0), where the libraries mapped last are.
    static func maps(_ pid: Int32) throws -> String {
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? file.close() }
        return String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
    }

    static func mapsLibheif(_ pid: Int32) throws -> Bool {
        let maps = try maps(pid)
        return ["libheif.so", "libde265.so"].contains { maps.contains($0) }
    }

    @Test func libheifIsLoadedAtTheFirstHEIF() throws {
        try withDaemon("footprint-heif", library: { lib in
            _ = try lib.write("photos/a.jpg", JPEGFixture.make(width: 64, height: 48))
        }) { lib, _, daemon in
            let pid = daemon.process.processIdentifier
            #expect(try !Self.mapsLibheif(pid), "a library of JPEGs maps no libheif")
            let c = try RawClient(daemon.socket)
            try ImagesEndToEndTests.request(c, id: 1, asset: try ImagesEndToEndTests.asset(daemon, named: "a.jpg"), size: [32, 32])
            #expect(try ImagesEndToEndTests.answer(c, id: 1).response["result"]?["path"] != nil)
            #expect(try !Self.mapsLibheif(pid), "a JPEG drawn maps no libheif")
            _ = try lib.write("phone/IMG_0001.HEIC", try HEIFFixture().bytes())
            let heic = try eventually("the HEIC to be indexed") {
                try daemon.allAssets().first { $0["path"]?.stringValue?.hasSuffix("IMG_0001.HEIC") == true }
            } until: { $0 != nil }
            try ImagesEndToEndTests.request(c, id: 2, asset: try #require(heic?["id"]?.stringValue), size: [512, 512])
            let drawn = try #require(try ImagesEndToEndTests.answer(c, id: 2).response["result"])
            #expect(drawn["width"]?.intValue == 512 && drawn["height"]?.intValue == 384, "\(drawn)")
            #expect(try Self.mapsLibheif(pid), "the first HEIF drawn opened libheif")
        }
    }

    static func mapsFFmpeg(_ pid: Int32) throws -> Bool {
        let maps = try maps(pid)
        return ["libavformat.so", "libavcodec.so", "libswscale.so", "libgcrypt.so"].contains { maps.contains($0) }
    }

    @Test func ffmpegIsLoadedAtTheFirstVideo() throws {
        try withDaemon("footprint", library: { lib in
            _ = try lib.write("photos/a.jpg", JPEGFixture.make(width: 64, height: 48))
        }) { lib, _, daemon in
            let pid = daemon.process.processIdentifier
            #expect(try !Self.mapsFFmpeg(pid), "a library of photos maps no FFmpeg library")
            _ = try lib.write("video/clip.mp4", MP4Fixture(width: 640, height: 360).bytes())
            let clip = try eventually("the clip to be indexed") {
                try daemon.allAssets().first { $0["mediaType"]?.stringValue == "video" }
            } until: { $0 != nil }
            #expect(try Self.mapsFFmpeg(pid), "the first video opened FFmpeg")
            // And FFmpeg read it: the frame and bit rates are libavformat's.
            #expect(clip?["frameRate"]?.doubleValue != nil && clip?["bitRate"]?.intValue != nil)
        }
    }
}
