import Foundation
import PhotoMetadata
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing

/// The byte sources, and proof that the reader reads headers, not files.
@Suite struct SourceTests {
    /// Writes pieces into a new (sparse) file of `size` bytes and returns its path.
    static func sparseFile(size: Int64, pieces: [(offset: Int64, bytes: [UInt8])], name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("photod-meta-\(UUID().uuidString)-\(name)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        for (offset, bytes) in pieces {
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: Data(bytes))
        }
        try handle.truncate(atOffset: UInt64(size))
        return url
    }

    @Test func largeJPEGReadsOnlyItsHeaders() throws {
        let exif = ExifFixture(make: "NIKON", model: "D7200", dateTimeOriginal: "2020:02:02 12:00:00")
        let bytes = JPEGFixture(width: 6000, height: 4000, exif: exif, scanBytes: 5_000_000).bytes()
        let url = try Self.sparseFile(size: Int64(bytes.count), pieces: [(0, bytes)], name: "big.jpg")
        defer { try? FileManager.default.removeItem(at: url) }
        let (m, source) = try Corpus.read(url)
        #expect(m.pixelWidth == 6000 && m.make == "NIKON")
        #expect(source.bytesRead < 200_000, "read \(source.bytesRead) of \(bytes.count) bytes")
        #expect(source.readCalls <= 2)
    }

    @Test func movieAfterA50MBMediaDataReadsUnder1MB() throws {
        let fixture = MP4Fixture(width: 3840, height: 2160, rotation: 90, creationTime: 1_650_000_000, mediaDataBytes: 50_000_000,
                                 mediaDataFirst: true)
        let (size, pieces) = fixture.pieces()
        let url = try Self.sparseFile(size: size, pieces: pieces, name: "late-moov.mp4")
        defer { try? FileManager.default.removeItem(at: url) }
        let (m, source) = try Corpus.read(url)
        #expect(m.pixelWidth == 3840 && m.orientation == 6 && m.dates.containerUTC == 1_650_000_000)
        #expect(source.bytesRead < 1_000_000, "read \(source.bytesRead) of \(size) bytes")
    }

    @Test func hugeClaimedMdatInASmallFileIsNotTrusted() throws {
        // The mdat header says 8 GB (64-bit size); the file has 64 KiB.
        var bytes = Build.box("ftyp", Build.ascii("isom") + Build.be32(0))
        bytes += Build.be32(1) + Build.ascii("mdat") + Build.be32(2) + Build.be32(0) + [UInt8](repeating: 0, count: 65_536)
        let url = try Self.sparseFile(size: Int64(bytes.count), pieces: [(0, bytes)], name: "liar.mp4")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try Corpus.read(url)
            Issue.record("expected an error: nothing readable")
        } catch {
            #expect(error.code == .truncated)
        }
    }

    @Test func fileSourceServesTheHeadFromMemory() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let url = try Self.sparseFile(size: Int64(bytes.count), pieces: [(0, bytes)], name: "head.bin")
        defer { try? FileManager.default.removeItem(at: url) }
        let fd = try FileDescriptor.open(PathBytes(url.path))
        defer { fd.close() }
        var source = FileSource(descriptor: fd, size: Int64(bytes.count), headBytes: 4096)
        #expect(try source.head() == Array(bytes.prefix(4096)))
        #expect(try source.read(at: 100, count: 10) == Array(bytes[100..<110]))
        #expect(source.readCalls == 1 && source.bytesRead == 4096)
        #expect(try source.read(at: 90_000, count: 20_000) == Array(bytes[90_000...]))  // fewer at the end
        #expect(try source.read(at: 100_000, count: 10) == [])  // empty past it
        #expect(source.readCalls == 2)
    }

    @Test func memorySourceSemantics() throws {
        var s = MemorySource([1, 2, 3, 4, 5])
        #expect(s.size == 5)
        #expect(try s.read(at: 0, count: 100) == [1, 2, 3, 4, 5])
        #expect(try s.read(at: 3, count: 100) == [4, 5])
        #expect(try s.read(at: 5, count: 1) == [])
        #expect(try s.read(at: -1, count: 1) == [])
    }

    @Test func unreadableFileIsAnError() throws {
        // A descriptor opened on a directory: pread fails with EISDIR.
        let fd = try FileDescriptor.open(PathBytes(FileManager.default.temporaryDirectory.path))
        defer { fd.close() }
        var source = FileSource(descriptor: fd, size: 4096)
        do throws(MetadataError) {
            _ = try MetadataReader().read(&source, fileName: Array("dir".utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unreadable)
        }
    }
}

extension SourceTests {
    @Test func largePNGWithExifAfterTheImageDataReadsOnlyChunkHeaders() throws {
        // 2,000 IDAT chunks of 8 KiB (16 MB), then eXIf: the walk hops from header to header.
        var head: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        head += PNGFixture.chunk("IHDR", Build.be32(4000) + Build.be32(3000) + [8, 2, 0, 0, 0])
        var pieces: [(offset: Int64, bytes: [UInt8])] = [(0, head)]
        var offset = Int64(head.count)
        for _ in 0..<2000 {
            // Header and CRC only; the payload stays a hole in the sparse file.
            pieces.append((offset, Build.be32(8192) + Build.ascii("IDAT")))
            offset += 8 + 8192 + 4
        }
        let tail = PNGFixture.chunk("eXIf", ExifFixture(make: "Late").bytes()) + PNGFixture.chunk("IEND", [])
        pieces.append((offset, tail))
        let url = try Self.sparseFile(size: offset + Int64(tail.count), pieces: pieces, name: "late-exif.png")
        defer { try? FileManager.default.removeItem(at: url) }
        let (m, source) = try Corpus.read(url)
        #expect(m.make == "Late" && m.pixelWidth == 4000)
        #expect(source.bytesRead < 200_000, "read \(source.bytesRead) bytes")
    }
}

/// A file measured, then cut short (or grown) before its bytes are read: the reader goes by
/// what the reads return, never by the size taken earlier.
@Suite struct StaleSizeTests {
    static let fixtures: [(name: String, bytes: [UInt8])] = [
        ("a.jpg", JPEGFixture(width: 4000, height: 3000,
                              exif: ExifFixture(make: "Canon", model: "EOS", dateTimeOriginal: "2020:01:02 03:04:05"),
                              scanBytes: 200_000).bytes()),
        ("b.png", PNGFixture(width: 64, height: 32, exif: ExifFixture(make: "X", model: "Y", dateTimeOriginal: "2021:01:01 00:00:00"),
                             exifAfterImageData: true).bytes()),
        ("c.mp4", MP4Fixture(width: 1920, height: 1080, creationTime: 1_650_000_000, mediaDataBytes: 100_000,
                             mediaDataFirst: true).bytes()),
        ("d.tif", TIFFFixture(ifd0: [.init(256, .long([640])), .init(257, .long([480]))]).bytes()),
    ]

    @Test("Truncated after it was measured: an error or what is valid, no trap, no read past the end",
          arguments: [0, 1, 7, 100, 4096, 65_535, 65_537, 150_000])
    func truncatedAfterStat(cut: Int) throws {
        for (name, bytes) in Self.fixtures {
            let url = try SourceTests.sparseFile(size: Int64(bytes.count), pieces: [(0, bytes)], name: name)
            defer { try? FileManager.default.removeItem(at: url) }
            let fd = try FileDescriptor.open(PathBytes(url.path))
            defer { fd.close() }
            let measured = try fd.stat().size
            #expect(truncate(url.path, off_t(min(cut, bytes.count))) == 0)
            var source = FileSource(descriptor: fd, size: measured)
            _ = try? MetadataReader().read(&source, fileName: Array(name.utf8))
            // Reads end at the new end of the file; the head (cut short) is read once.
            #expect(source.bytesRead <= Int64(min(cut, bytes.count)) * 2, "\(name) cut at \(cut): read \(source.bytesRead)")
        }
    }

    @Test("A size that claims a terabyte for a small file allocates nothing for it")
    func claimedSizeIsNotAllocated() throws {
        for (name, bytes) in Self.fixtures {
            let url = try SourceTests.sparseFile(size: Int64(bytes.count), pieces: [(0, bytes)], name: name)
            defer { try? FileManager.default.removeItem(at: url) }
            let fd = try FileDescriptor.open(PathBytes(url.path))
            defer { fd.close() }
            var source = FileSource(descriptor: fd, size: 1 << 40)
            _ = try? MetadataReader().read(&source, fileName: Array(name.utf8))
            #expect(source.bytesRead <= Int64(bytes.count), "\(name): read \(source.bytesRead) of \(bytes.count)")
        }
    }
}
