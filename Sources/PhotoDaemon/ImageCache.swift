import PhotoImaging
import PhotoModel
import PhotoSystem
#if canImport(Glibc)
import Glibc
#endif

/// photod's image cache: rendered images as files that clients (and a web server) read
/// directly. Content-addressed: an image's file name says which version of which file it was
/// made from and at what size, so a changed file can never be answered with an old image.
///
/// Layout: `<root>/<shard>/<asset id>/<file key>-<mode>-<W>x<H>=<w>x<h>.<jpg|png>` — `W×H` the
/// size asked for, `w×h` the image's own; `<file key>` hashes the file's identity (device,
/// inode, size, modification time) and the renderer's version; `<shard>` is the id's last two
/// characters (random), so no directory grows past a few thousand entries. The embedded EXIF
/// thumbnail is kept as `<file key>-exif=<w>x<h>.jpg`.
///
/// Directories are 0750 and files 0640, in the cache directory's group (systemd's
/// `CacheDirectory=` makes it photod's; put clients in that group to read images), or in
/// `--socket-group`'s when photod makes the directory itself. A size cap
/// with least-recently-used eviction bounds the directory; a file's images are removed when
/// the file changes (on the next request, and whenever its asset leaves the library).
final class ImageCache: Sendable {
    let root: PathBytes
    /// Bytes the cache may hold; the least recently used images go beyond it.
    let capacity: Int64
    /// `--socket-group`: the group that may read the images (the root gets it and the set-group-id
    /// bit, so that every directory and file made below inherits it).
    let group: UInt32?
    let logger: Logger

    /// Bump when rendering changes, so that old images are not served for new requests.
    static let rendererVersion = 2

    struct Entry: Sendable {
        var path: PathBytes
        var bytes: Int64
        var size: PixelSize
        var used: UInt64
    }

    private struct State: Sendable {
        var loaded = false
        /// By asset id, then by name stem (`<file key>-<mode>-<W>x<H>`), the images on disk:
        /// what one request or one change needs is one asset's handful, never a scan.
        var images: [String: [String: Entry]] = [:]
        var count = 0
        var total: Int64 = 0
        var clock: UInt64 = 0
        var evictions = 0

        mutating func insert(_ entry: Entry, asset: String, name: String) {
            if let old = images[asset, default: [:]].updateValue(entry, forKey: name) {
                total -= old.bytes
            } else {
                count += 1
            }
            total += entry.bytes
        }

        /// Removes the asset's images whose names `match`; returns them.
        mutating func remove(asset: String, where match: (String) -> Bool) -> [Entry] {
            guard var named = images[asset] else { return [] }
            var gone: [Entry] = []
            for (name, e) in named where match(name) {
                named[name] = nil
                gone.append(e)
                total -= e.bytes
            }
            count -= gone.count
            images[asset] = named.isEmpty ? nil : named
            return gone
        }
    }

    private let state = Locked(State())

    init(root: PathBytes, capacity: Int64, group: UInt32? = nil, logger: Logger) {
        self.root = root
        self.capacity = capacity
        self.group = group
        self.logger = logger
    }

    /// What `library.status` shows.
    struct Usage: Sendable {
        var files: Int
        var bytes: Int64
        var evictions: Int
    }

    var usage: Usage {
        loadIfNeeded()
        return state.withLock { Usage(files: $0.count, bytes: $0.total, evictions: $0.evictions) }
    }

    // MARK: Keys

    /// The hash naming one version of a file (its identity and the renderer's version).
    static func fileKey(_ st: FileStat) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for value in [st.device, st.inode, UInt64(bitPattern: st.size), UInt64(bitPattern: st.mtimeNanoseconds),
                      UInt64(rendererVersion)] {
            var v = value
            for _ in 0..<8 {
                h = (h ^ (v & 0xFF)) &* 0x0000_0100_0000_01B3
                v >>= 8
            }
        }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func stem(asset: AssetID, fileKey: String, mode: String, target: PixelSize) -> String {
        "\(asset.rawValue)/\(fileKey)-\(mode)-\(target.width)x\(target.height)"
    }

    /// The stem of the thumbnail a file carries (EXIF's, or a HEIF thumbnail item).
    static func exifStem(asset: AssetID, fileKey: String) -> String { "\(asset.rawValue)/\(fileKey)-exif" }

    /// `<asset>/<name>` → its two parts.
    static func split(_ stem: String) -> (asset: String, name: String) {
        let slash = stem.firstIndex(of: "/")!
        return (String(stem[..<slash]), String(stem[stem.index(after: slash)...]))
    }

    private func directory(of asset: String) -> PathBytes {
        root.appending(String(asset.suffix(2))).appending(asset)
    }

    /// The mode of the cache's directories, whatever the umask: 0750, or 02750 in `group` (the
    /// set-group-id bit makes what is created below inherit the group).
    private var directoryMode: mode_t { group == nil ? 0o750 : 0o2750 }

    /// Makes an asset's directory (and the root and shard above it) when missing.
    private func makeDirectories(for dir: PathBytes) throws(SystemError) {
        guard access(dir.string, F_OK) != 0 else { return }
        if access(root.string, F_OK) != 0 {
            try Directory.makePath(root, mode: 0o750)
            if let group { try Groups.chgrp(root, to: group) }
            _ = try syscall("chmod", context: root.string) { chmod(root.string, directoryMode) }
        }
        for path in [dir.parent, dir] where access(path.string, F_OK) != 0 {
            let rc = mkdir(path.string, 0o750)
            if rc != 0 && errno != EEXIST { throw SystemError(call: "mkdir", errno: errno, context: path.string) }
            _ = try syscall("chmod", context: path.string) { chmod(path.string, directoryMode) }
        }
    }

    // MARK: Lookups

    /// The cached image for `stem`, marked as just used.
    func lookup(_ stem: String) -> Entry? {
        loadIfNeeded()
        let (asset, name) = Self.split(stem)
        let hit = state.withLock { s -> Entry? in
            guard var e = s.images[asset]?[name] else { return nil }
            s.clock += 1
            e.used = s.clock
            s.images[asset]?[name] = e
            return e
        }
        guard let hit else { return nil }
        guard access(hit.path.string, R_OK) == 0 else {
            // Removed behind photod's back (a cleaner, `rm`): forget it.
            _ = state.withLock { $0.remove(asset: asset) { $0 == name } }
            return nil
        }
        // The file's time carries the order across restarts.
        _ = utimensat(AT_FDCWD, hit.path.string, nil, 0)
        return hit
    }

    /// Whether the index lists an image for `stem` (no I/O, no change to its recency).
    func holds(_ stem: String) -> Bool {
        loadIfNeeded()
        let (asset, name) = Self.split(stem)
        return state.withLock { $0.images[asset]?[name] != nil }
    }

    /// The cached images of one version of an asset's file (any size and mode, the EXIF
    /// thumbnail included): what a degraded answer can be made of.
    func variants(asset: AssetID, fileKey: String, excluding stem: String? = nil) -> [Entry] {
        loadIfNeeded()
        let prefix = fileKey + "-"
        let excluded = stem.map { Self.split($0).name }
        return state.withLock { s in
            (s.images[asset.rawValue] ?? [:]).filter { $0.key.hasPrefix(prefix) && $0.key != excluded }.map(\.value)
        }
    }

    /// The cached image of an asset at a size and mode, of whichever version of its file: for
    /// a file that cannot be looked at now (its disk is unmounted), the last one made.
    func anyVersion(asset: AssetID, mode: String, target: PixelSize) -> Entry? {
        loadIfNeeded()
        let suffix = "-\(mode)-\(target.width)x\(target.height)"
        return state.withLock { s in
            (s.images[asset.rawValue] ?? [:]).filter { $0.key.hasSuffix(suffix) }.max { $0.value.used < $1.value.used }?.value
        }
    }

    /// Whether any image of the asset is cached.
    func hasImages(of asset: AssetID) -> Bool {
        loadIfNeeded()
        return state.withLock { $0.images[asset.rawValue] != nil }
    }

    // MARK: Writing

    /// Eviction goes down to this share of the capacity, so that the sort of every image by
    /// use is paid once per tenth of the cache, not at every store of a full cache.
    static let evictionTarget = 0.9

    /// Writes an image under `stem` (atomically: a reader sees the whole file or none),
    /// removes the asset's images of other file versions, and evicts beyond the cap.
    func store(_ image: EncodedImage, stem: String) throws -> Entry {
        loadIfNeeded()
        let (asset, name) = Self.split(stem)
        let dir = directory(of: asset)
        try makeDirectories(for: dir)
        let file = dir.appending("\(name)=\(image.size.width)x\(image.size.height).\(image.fileExtension)")
        let temporary = dir.appending(".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        try Self.write(image.bytes, to: file, temporary: temporary)
        let version = String(name.prefix(16)) + "-"
        let (entry, gone) = state.withLock { s -> (Entry, [Entry]) in
            s.clock += 1
            let entry = Entry(path: file, bytes: Int64(image.bytes.count), size: image.size, used: s.clock)
            s.insert(entry, asset: asset, name: name)
            // Images of an older version of the file: never served again.
            var gone = s.remove(asset: asset) { !$0.hasPrefix(version) }
            if s.total > capacity {
                let target = Int64(Double(capacity) * Self.evictionTarget)
                var oldest = s.images.flatMap { a, named in named.map { (asset: a, name: $0.key, used: $0.value.used) } }
                oldest.sort { $0.used < $1.used }
                for victim in oldest where s.total > target && !(victim.asset == asset && victim.name == name) {
                    let evicted = s.remove(asset: victim.asset) { $0 == victim.name }
                    s.evictions += evicted.count
                    gone += evicted
                }
            }
            return (entry, gone)
        }
        for e in gone { unlink(e.path.string) }
        return entry
    }

    /// Removes the images of an asset (it left the library), or those of other versions of its
    /// file than `keep` (it changed).
    func remove(asset: AssetID, except keep: String? = nil) {
        guard state.withLock({ $0.loaded }) else { return }
        let kept = keep.map { $0 + "-" }
        let gone = state.withLock { s in s.remove(asset: asset.rawValue) { name in !(kept.map(name.hasPrefix) ?? false) } }
        for e in gone { unlink(e.path.string) }
        if !gone.isEmpty, keep == nil { rmdir(directory(of: asset.rawValue).string) }
    }

    /// Writes a file whole under a temporary name, then renames it into place: a reader sees
    /// all of it or nothing. Not synced — a cache is not worth an `fsync` per image; a file a
    /// power cut left empty is dropped when the cache is loaded.
    static func write(_ bytes: [UInt8], to path: PathBytes, temporary: PathBytes) throws(SystemError) {
        let fd = try temporary.withCString { p throws(SystemError) in
            try syscall("open", context: temporary.string) { open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640) }
        }
        var isOpen = true
        do throws(SystemError) {
            _ = try syscall("fchmod", context: temporary.string) { fchmod(fd, 0o640) }  // whatever the umask
            var offset = 0
            while offset < bytes.count {
                let n = try syscall("write", context: temporary.string) {
                    bytes.withUnsafeBytes { b in Glibc.write(fd, b.baseAddress! + offset, b.count - offset) }
                }
                offset += n
            }
            isOpen = false
            _ = try syscall("close", context: temporary.string) { close(fd) }
            _ = try syscall("rename", context: path.string) { rename(temporary.string, path.string) }
        } catch {
            if isOpen { _ = close(fd) }
            unlink(temporary.string)
            throw error
        }
    }

    // MARK: Loading

    /// Reads what is on disk, once (the first request): names, sizes, and the order of use
    /// from the files' times. Leftover temporary files are removed.
    private func loadIfNeeded() {
        guard !state.withLock({ $0.loaded }) else { return }
        var found: [(asset: String, name: String, entry: Entry, mtime: Int64)] = []
        if let shards = try? Directory(path: root).entries() {
            for shard in shards where shard.kind == .directory && shard.name.first != UInt8(ascii: ".") {
                let shardPath = root.appending(shard.name)
                for asset in (try? Directory(path: shardPath).entries()) ?? [] where asset.kind == .directory {
                    let assetPath = shardPath.appending(asset.name)
                    let assetName = String(decoding: asset.name, as: UTF8.self)
                    for file in (try? Directory(path: assetPath).entries()) ?? [] {
                        let path = assetPath.appending(file.name)
                        let name = String(decoding: file.name, as: UTF8.self)
                        if name.hasPrefix(".") {
                            if name.hasSuffix(".tmp") { unlink(path.string) }
                            continue
                        }
                        guard let parsed = Self.parse(name), let st = try? FileStat.of(path), st.isRegularFile else { continue }
                        if st.size == 0 {
                            unlink(path.string)
                            continue
                        }
                        found.append((assetName, parsed.stem, Entry(path: path, bytes: st.size, size: parsed.size, used: 0),
                                      st.mtimeNanoseconds))
                    }
                }
            }
        }
        found.sort { $0.mtime < $1.mtime }
        state.withLock { s in
            guard !s.loaded else { return }
            for image in found {
                s.clock += 1
                var e = image.entry
                e.used = s.clock
                s.insert(e, asset: image.asset, name: image.name)
            }
            s.loaded = true
        }
        if !found.isEmpty { logger.debug("image cache: \(found.count) images on disk in '\(root)'") }
    }

    /// `<stem>=<w>x<h>.<ext>` → the stem and the image's size.
    static func parse(_ name: String) -> (stem: String, size: PixelSize)? {
        guard let eq = name.lastIndex(of: "="), let dot = name.lastIndex(of: "."), eq < dot else { return nil }
        let dims = name[name.index(after: eq)..<dot].split(separator: "x")
        guard dims.count == 2, let w = Int(dims[0]), let h = Int(dims[1]) else { return nil }
        return (String(name[..<eq]), PixelSize(width: w, height: h))
    }
}
