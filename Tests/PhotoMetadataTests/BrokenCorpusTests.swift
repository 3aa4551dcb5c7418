import Foundation
import PhotoMetadata
import PhotoModel
import Testing

/// The deliberately damaged files of `broken/`, driven by `broken/expected.json`: an error
/// where one is required, the listed values where the file is indexed, never a crash or a
/// read of a claimed size.
@Suite struct BrokenCorpusTests {
    struct Case: @unchecked Sendable, CustomStringConvertible {
        let json: [String: Any]
        var file: String { json["file"] as? String ?? "?" }
        var description: String { file }
    }

    static let cases: [Case] = {
        guard let root = Corpus.root,
              let data = try? Data(contentsOf: root.appendingPathComponent("broken/expected.json")),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = object["files"] as? [[String: Any]] else { return [] }
        return files.map(Case.init)
    }()

    @Test(.enabled(if: Corpus.root != nil, Comment(rawValue: Corpus.skipReason)))
    func expectationsArePresent() {
        #expect(Self.cases.count == 10)
    }

    @Test(.enabled(if: Corpus.root != nil, Comment(rawValue: Corpus.skipReason)), arguments: cases)
    func behavesAsExpected(_ c: Case) throws {
        let root = try #require(Corpus.root)
        let url = root.appendingPathComponent("broken").appendingPathComponent(c.file)
        let outcome = c.json["outcome"] as? String
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        let result = Result { () throws(MetadataError) in try Corpus.read(url) }
        if case .success(let (_, source)) = result {
            // Never more than the file, and never a claimed size.
            #expect(source.bytesRead <= Int64(max(size, 65536)), "\(c.file): read \(source.bytesRead) bytes")
        }
        switch outcome {
        case "error":
            guard case .failure(let error) = result else { Issue.record("\(c.file): indexed, expected an error"); return }
            switch c.json["error_reason"] as? String {
            case "empty file": #expect(error.code == .emptyFile)
            default:
                #expect(error.code == .notMedia, "\(c.file): \(error)")
                if c.json["detected_type"] as? String == "text/plain" { #expect(error.detectedKind == "text") }
            }
        case "index":
            guard case .success(let (meta, _)) = result else {
                Issue.record("\(c.file): \(result), expected an indexed item")
                return
            }
            check(meta, against: c.json["expected"] as? [String: Any] ?? [:], file: c.file)
        default:  // index_or_error
            switch result {
            case .success(let (meta, _)): check(meta, against: c.json["if_indexed"] as? [String: Any] ?? [:], file: c.file)
            case .failure(let error):
                #expect(error.code != .unreadable, "\(c.file): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
    }

    func check(_ meta: MediaMetadata, against expected: [String: Any], file: String) {
        if let type = expected["mediaType"] as? String {
            #expect(meta.mediaType == (type == "video" ? .video : .image), "\(file)")
        }
        if expected.keys.contains("width") {
            #expect(meta.pixelWidth == (expected["width"] as? Int), "\(file): width \(String(describing: meta.pixelWidth))")
            #expect(meta.pixelHeight == (expected["height"] as? Int), "\(file): height \(String(describing: meta.pixelHeight))")
        }
        if let make = expected["make"] as? String { #expect(meta.make == make, "\(file)") }
        if let model = expected["model"] as? String { #expect(meta.model == model, "\(file)") }
        if let o = expected["orientation"] as? Int { #expect((meta.orientation ?? 1) == o, "\(file)") }
        if expected.keys.contains("dateTimeOriginal") {
            let want = (expected["dateTimeOriginal"] as? String).flatMap { Timestamp.exif(Array($0.utf8)) }
            // Whole seconds: the file's SubSecTimeOriginal adds milliseconds the expectation omits.
            #expect(meta.dates.exifOriginal?.local.secondsSinceEpochOnThisClock == want?.local.secondsSinceEpochOnThisClock,
                    "\(file): \(String(describing: meta.dates.exifOriginal))")
        }
        if let modified = expected["ifd0DateTime"] as? String {
            #expect(meta.dates.exifModified?.local == Timestamp.exif(Array(modified.utf8))?.local, "\(file)")
        }
        if expected.keys.contains("gps") {
            if let gps = expected["gps"] as? [String: Any], let lat = gps["latitude"] as? Double, let lon = gps["longitude"] as? Double {
                #expect(abs((meta.latitude ?? .nan) - lat) < 1e-6 && abs((meta.longitude ?? .nan) - lon) < 1e-6, "\(file)")
            } else {
                #expect(meta.latitude == nil && meta.longitude == nil, "\(file): GPS should be absent")
            }
        }
        if expected.keys.contains("duration") {
            if let d = expected["duration"] as? Double {
                #expect(abs((meta.duration ?? .nan) - d) < 0.01, "\(file): duration \(String(describing: meta.duration))")
            } else {
                #expect(meta.duration == nil, "\(file)")
            }
        }
        if expected.keys.contains("creationDate") {
            if let text = expected["creationDate"] as? String, let t = Timestamp.exif(Array(text.utf8)) {
                #expect(meta.dates.containerUTC == t.local.unixSeconds(offsetSeconds: 0), "\(file)")
            } else {
                #expect(meta.dates.containerUTC == nil, "\(file)")
            }
        }
    }
}
