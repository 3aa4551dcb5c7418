import Foundation
import PhotoModel
import PhotoSystem

/// A fresh directory under the system's temporary directory, removed by `remove()`.
/// Tests create one each, so they can run in parallel.
public struct TemporaryDirectory: Sendable {
    public let path: PathBytes

    /// Creates `$TMPDIR/photod-test-<label>-<random>` (or under `parent`).
    public init(_ label: String = "t", in parent: String? = nil) throws {
        let base = parent ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let name = "photod-test-\(label)-\(UInt64.random(in: 0 ... .max))"
        let url = URL(fileURLWithPath: base).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = PathBytes(url.path)
    }

    /// An existing directory (a mount point, a library root), to write into with the same
    /// helpers; `remove()` would remove it.
    public init(existing path: PathBytes) { self.path = path }

    /// `path/relative`.
    public func callAsFunction(_ relative: String) -> PathBytes { path.appending(relative) }

    /// Writes `bytes` to `relative`, creating directories on the way.
    @discardableResult
    public func write(_ relative: String, _ bytes: [UInt8]) throws -> PathBytes {
        let target = path.appending(relative)
        let url = URL(fileURLWithPath: target.string)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.writeFile(target.string, bytes)
        return target
    }

    /// Writes `bytes` to the file at `path` (created or truncated) through a descriptor opened
    /// close-on-exec. Foundation's `Data.write` opens without `O_CLOEXEC`, and a process another
    /// test starts at that moment can inherit the descriptor (Foundation closes only the
    /// descriptors it listed before the fork): photod then sees the file open for writing for
    /// that process's whole life, skips it as still being written, and the test is one file short.
    public static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let fd = try syscall("open", context: path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            done += try syscall("write", context: path) { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) } }
        }
    }

    /// Creates a directory (and its parents).
    public func makeDirectory(_ relative: String) throws {
        try FileManager.default.createDirectory(atPath: path.appending(relative).string, withIntermediateDirectories: true)
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path.string)
    }
}

/// Locations the tests need: the package root, the shared corpus, the built products.
public enum TestPaths {
    /// The package root (found from this source file's path).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// `../shared/corpus` next to the checkout (or `$PHOTOD_CORPUS`), when it exists.
    public static var corpus: URL? {
        if let env = ProcessInfo.processInfo.environment["PHOTOD_CORPUS"] {
            let url = URL(fileURLWithPath: env)
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }
        let url = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("real/oracle.json").path) ? url : nil
    }

    /// A RAW from a real camera: the Canon EOS 30D CR2 of Debian's rawtran-doc, which
    /// `scripts/install-deps --tests` unpacks into `.build/test-data` (or the installed package's).
    public static var cameraCR2: URL? {
        let candidates = [packageRoot.appendingPathComponent(".build/test-data/rawtran/usr/share/doc/rawtran/IMG_5952.CR2"),
                          URL(fileURLWithPath: "/usr/share/doc/rawtran/IMG_5952.CR2")]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The directory holding the built `photod` and `photoctl` (next to the test bundle).
    public static var products: URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("photod").path) { return dir }
            dir.deleteLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }
}
