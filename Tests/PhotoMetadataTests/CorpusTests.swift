import Foundation
import PhotoMetadata
import PhotoModel
import PhotoSystem
import Testing

/// The real-world corpus against exiftool's reading of it (`real/oracle.json`): every image
/// and video is media and nothing else is; pixel size, orientation, GPS and the capture date
/// agree, except in the documented cases below.
@Suite struct CorpusTests {
    /// Files where photod legitimately differs from exiftool, and why. Keys are oracle
    /// `SourceFile` paths; values name the field that differs.
    static let exceptions: [String: (field: String, reason: String)] = [
        // Apple's `com.apple.quicktime.creationdate` (11:25:40+03:00, when recording started) wins
        // over the `mvhd` time (08:25:57Z, when the file was finished) by photod's rules; exiftool's
        // QuickTime:CreateDate is the `mvhd` time. Same day, 17 seconds apart.
        "metadata-extractor-images/mov/with-gps.mov": ("date-day", "Apple creationdate preferred over mvhd"),
    ]

    /// XMP `photoshop:DateCreated` of files where it is the capture date by photod's rules (it
    /// ranks above `xmp:CreateDate` and IPTC), which the oracle does not list (it has no
    /// XMP:DateCreated key): the value in each file, a bare date taken at midnight.
    /// (PhotoMechanic.jpg's IPTC date and time, 06:27:51-05:00, rank below it.)
    static let xmpDateCreated: [String: String] = [
        "exif-js/example/Bush-dog.jpg": "2003:08:30 00:00:00",
        "ianare-exif-samples/jpg/long_description.jpg": "2003:08:31 00:00:00",
        "exiftool/t/images/PhotoMechanic.jpg": "2006:10:29 00:00:00",
    ]

    struct Entry: @unchecked Sendable, CustomStringConvertible {
        let json: [String: Any]
        var path: String { json["SourceFile"] as? String ?? "?" }
        var description: String { path }
        subscript(_ key: String) -> Any? { json[key] }
        func int(_ key: String) -> Int? { (json[key] as? NSNumber)?.intValue }
        func double(_ key: String) -> Double? {
            if let n = json[key] as? NSNumber { return n.doubleValue }
            if let s = json[key] as? String { return Double(s) }
            return nil
        }
        func string(_ key: String) -> String? { json[key] as? String }
    }

    static let entries: [Entry] = {
        guard let root = Corpus.root,
              let data = try? Data(contentsOf: root.appendingPathComponent("real/oracle.json")),
              let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
        return array.map(Entry.init).filter { $0.string("File:MIMEType") != "image/svg+xml" }
    }()

    @Test(.enabled(if: Corpus.root != nil, Comment(rawValue: Corpus.skipReason)))
    func corpusIsPresent() {
        #expect(Self.entries.count > 150)
    }

    @Test(.enabled(if: Corpus.root != nil, Comment(rawValue: Corpus.skipReason)), arguments: entries)
    func agreesWithExiftool(_ e: Entry) throws {
        let root = try #require(Corpus.root)
        let url = root.appendingPathComponent("real").appendingPathComponent(e.path)
        let mime = e.string("File:MIMEType") ?? ""
        let isMedia = mime.hasPrefix("image/") || mime.hasPrefix("video/")
        let result = Result { () throws(MetadataError) in try Corpus.read(url).0 }
        guard isMedia else {
            if case .success(let m) = result { Issue.record("\(e.path): \(mime) read as media \(m.format)") }
            if case .failure(let error) = result { #expect(error.code == .notMedia, "\(e.path): \(error)") }
            return
        }
        let meta: MediaMetadata
        switch result {
        case .success(let m): meta = m
        case .failure(let error): Issue.record("\(e.path) (\(mime)): \(error)"); return
        }
        let exception = Self.exceptions[e.path]
        #expect(meta.mediaType == (mime.hasPrefix("video/") ? .video : .image), "\(e.path): \(meta.format)")

        // Pixel size as stored.
        let groups = ["File", "PNG", "GIF", "RIFF", "QuickTime", "Matroska", "Jpeg2000", "MNG", "Flash", "ASF"]
            + (e.string("File:FileType") == "TIFF" ? ["EXIF"] : [])
        if exception?.field != "size", let g = groups.first(where: { e.int("\($0):ImageWidth") != nil }) {
            #expect(meta.pixelWidth == e.int("\(g):ImageWidth") && meta.pixelHeight == e.int("\(g):ImageHeight"),
                    "\(e.path): size \(String(describing: meta.pixelWidth))x\(String(describing: meta.pixelHeight)), oracle \(g) \(e.int("\(g):ImageWidth") ?? 0)x\(e.int("\(g):ImageHeight") ?? 0)")
        }

        // Orientation (1 when absent); videos: the track rotation.
        if exception?.field != "orientation" {
            var expected = e.int("EXIF:Orientation").flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
            if meta.mediaType == .video {
                expected = [0: 1, 90: 6, 180: 3, 270: 8][e.int("Composite:Rotation") ?? 0] ?? 1
            }
            #expect((meta.orientation ?? 1) == expected, "\(e.path): orientation \(String(describing: meta.orientation)), oracle \(expected)")
        }

        // GPS, signed.
        if exception?.field != "gps" {
            if let lat = e.double("Composite:GPSLatitude"), let lon = e.double("Composite:GPSLongitude") {
                #expect(abs((meta.latitude ?? .nan) - lat) < 1e-6 && abs((meta.longitude ?? .nan) - lon) < 1e-6,
                        "\(e.path): GPS \(String(describing: meta.latitude)),\(String(describing: meta.longitude)), oracle \(lat),\(lon)")
            } else {
                #expect(meta.latitude == nil && meta.longitude == nil, "\(e.path): GPS \(String(describing: meta.latitude)) where exiftool has none")
            }
        }

        // Capture date.
        if exception?.field == "date-day" {
            let resolved = CaptureDate.resolve(meta.dates, fileName: Array(url.lastPathComponent.utf8), mtimeNanoseconds: 0,
                                               zone: FixedZone.utc)
            let oracle = Self.oracleDate(e) ?? Self.composite(e)
            #expect(resolved.local.dateString == oracle?.0.dateString, "\(e.path): date \(resolved), oracle \(String(describing: oracle))")
        } else if exception?.field != "date" {
            let resolved = CaptureDate.resolve(meta.dates, fileName: Array(url.lastPathComponent.utf8), mtimeNanoseconds: 0,
                                               zone: FixedZone.utc)
            let oracle = Self.oracleDate(e)
            switch oracle {
            case nil:
                #expect(resolved.source == .fileName || resolved.source == .fileModified,
                        "\(e.path): date \(resolved) where exiftool has none")
            case .some((let local, let offset, let utc, let key)):
                if utc {
                    // A UTC container time: compare instants (Apple's local creationdate may win).
                    let ours = resolved.local.unixSeconds(offsetSeconds: resolved.offset?.seconds ?? 0)
                    #expect(ours == local.unixSeconds(offsetSeconds: 0), "\(e.path): date \(resolved), oracle \(key) \(local)Z")
                } else {
                    var mine = resolved.local, theirs = local
                    mine.millisecond = nil
                    theirs.millisecond = nil
                    #expect(mine == theirs, "\(e.path): date \(resolved), oracle \(key) \(local)")
                    if let offset { #expect(resolved.offset == offset, "\(e.path): offset \(resolved), oracle \(offset)") }
                }
            }
        }
    }

    /// exiftool's Composite:DateTimeOriginal (which may join IPTC date and time fields).
    static func composite(_ e: Entry) -> (LocalDateTime, UTCOffset?, utc: Bool, key: String)? {
        guard let text = e.string("Composite:DateTimeOriginal"), let t = Timestamp.exif(Array(text.utf8)) else { return nil }
        return (t.local, t.offset, false, "Composite:DateTimeOriginal")
    }

    /// The oracle's capture date by photod's rules: EXIF DateTimeOriginal, CreateDate, then XMP
    /// (DateTimeOriginal, photoshop:DateCreated, CreateDate), then IPTC (exiftool's
    /// Composite:DateTimeOriginal joins its DateCreated and TimeCreated), then EXIF ModifyDate,
    /// then container dates (QuickTime and Matroska in UTC).
    static func oracleDate(_ e: Entry) -> (LocalDateTime, UTCOffset?, utc: Bool, key: String)? {
        let keys = ["EXIF:DateTimeOriginal", "EXIF:CreateDate", "XMP:DateTimeOriginal", "XMP:DateCreated", "XMP:CreateDate",
                    "Composite:DateTimeOriginal", "EXIF:ModifyDate", "QuickTime:CreateDate", "Matroska:DateTimeOriginal",
                    "RIFF:DateTimeOriginal"]
        for key in keys {
            let value = key == "XMP:DateCreated" ? Self.xmpDateCreated[e.path] ?? e.string(key) : e.string(key)
            guard let text = value, let t = Timestamp.exif(Array(text.utf8)) else { continue }
            let utc = key.hasPrefix("QuickTime") || key.hasPrefix("Matroska")
            var offset = t.offset
            if key == "EXIF:DateTimeOriginal", let o = e.string("EXIF:OffsetTimeOriginal") { offset = UTCOffset(parsing: o) }
            if key == "EXIF:ModifyDate", let o = e.string("EXIF:OffsetTime") { offset = UTCOffset(parsing: o) }
            if key == "EXIF:CreateDate" { offset = nil }
            return (t.local, utc ? nil : offset, utc, key)
        }
        return nil
    }
}
