import Foundation
import PhotoModel
import PhotoTesting
import Testing

/// What photod maps into memory: FFmpeg's libraries (and the hundred libraries their codecs pull
/// in: libssh, gnutls, libgcrypt, x265...) are opened at the first video, so a daemon serving a
/// library of photos never maps them.
@Suite struct FootprintEndToEndTests {
    static func mapsFFmpeg(_ pid: Int32) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
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
