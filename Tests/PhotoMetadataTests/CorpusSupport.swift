import Foundation
import PhotoMetadata
import PhotoModel
import PhotoSystem

/// Where the shared corpus lives: `PHOTOD_CORPUS`, else `../shared/corpus` next to the
/// package root (found from this file's path).
enum Corpus {
    static let root: URL? = {
        if let env = ProcessInfo.processInfo.environment["PHOTOD_CORPUS"], !env.isEmpty {
            let url = URL(fileURLWithPath: env)
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }
        // Tests/PhotoMetadataTests/CorpusSupport.swift -> package root -> ../shared/corpus
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("real/oracle.json").path) ? url : nil
    }()

    static var skipReason: String {
        "skipping: the shared corpus was not found (set PHOTOD_CORPUS or check out ../shared next to the package)"
    }

    /// Reads a file through a real descriptor, as the pipeline does.
    static func read(_ url: URL, headBytes: Int = 65536) throws(MetadataError) -> (MediaMetadata, FileSource) {
        let path = PathBytes(url.path)
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path) } catch { throw MetadataError(.unreadable, "\(error)") }
        defer { fd.close() }
        let size: Int64
        do { size = try fd.stat().size } catch { throw MetadataError(.unreadable, "\(error)") }
        var source = FileSource(descriptor: fd, size: size, headBytes: headBytes)
        let meta = try MetadataReader().read(&source, fileName: Array(url.lastPathComponent.utf8))
        return (meta, source)
    }
}
