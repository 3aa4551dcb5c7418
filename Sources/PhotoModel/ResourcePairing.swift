/// One file of a folder, as resource pairing sees it: its name and what its content is
/// (sniffed, never guessed from the extension, except for `.xmp` sidecars, which are text).
public struct PairingFile: Sendable, Hashable {
    /// What a file is, for pairing.
    public enum Kind: Sendable, Hashable {
        /// A still image. `preference` orders the candidates for primary: lower is preferred
        /// (`ResourcePairing.preference(format:)`: HEIC/HEIF, then JPEG, ...).
        case image(raw: Bool, preference: Int)
        /// A video (a Live Photo's motion half, or a video of its own).
        case video
        /// An XMP sidecar (`IMG_1.xmp`, `IMG_1.JPG.xmp`).
        case sidecar
    }

    /// The file name inside its folder (no `/`), as bytes.
    public var name: [UInt8]
    /// What the content is.
    public var kind: Kind
    /// Apple's ContentIdentifier (MakerNote tag 0x0011 in the still; the QuickTime key
    /// `com.apple.quicktime.content.identifier` in the video), when present.
    public var contentIdentifier: String?
    /// The capture instant in Unix milliseconds, only when it comes from real metadata with a
    /// known zone (EXIF with an offset, Apple's creationdate, the UTC `mvhd` time); never from
    /// a file time, a file-name date or a wall time without offset.
    public var captureInstantMilliseconds: Int64?

    /// A file from its fields.
    public init(name: [UInt8], kind: Kind, contentIdentifier: String? = nil, captureInstantMilliseconds: Int64? = nil) {
        self.name = name
        self.kind = kind
        self.contentIdentifier = contentIdentifier
        self.captureInstantMilliseconds = captureInstantMilliseconds
    }

    /// A file named by a string (tests and callers with valid UTF-8 names).
    public init(_ name: String, _ kind: Kind, contentIdentifier: String? = nil, captureInstantMilliseconds: Int64? = nil) {
        self.init(name: Array(name.utf8), kind: kind, contentIdentifier: contentIdentifier,
                  captureInstantMilliseconds: captureInstantMilliseconds)
    }
}

/// One file of a paired asset and its role.
public struct PairedMember: Sendable, Hashable {
    /// The file name inside the folder.
    public var name: [UInt8]
    /// What the file is to the asset.
    public var role: Resource.Role

    /// A member from its fields.
    public init(name: [UInt8], role: Resource.Role) {
        self.name = name
        self.role = role
    }
}

/// The files of one folder that make one asset.
public struct PairedAsset: Sendable, Hashable {
    /// The primary file's name: the asset's path, pixel size and metadata come from it.
    public var primary: [UInt8]
    /// The primary's media type.
    public var mediaType: MediaType
    /// Every file, the primary first, then RAWs, the paired video and sidecars (each by name).
    public var members: [PairedMember]
    /// What pairing decides: `raw` when a member is RAW, `live` when a video is paired.
    /// The other subtypes come from `SubtypeRules`.
    public var subtypes: Set<AssetSubtype>

    /// An asset from its fields.
    public init(primary: [UInt8], mediaType: MediaType, members: [PairedMember], subtypes: Set<AssetSubtype>) {
        self.primary = primary
        self.mediaType = mediaType
        self.members = members
        self.subtypes = subtypes
    }

    /// The names of the members with `role`.
    public func names(_ role: Resource.Role) -> [[UInt8]] { members.filter { $0.role == role }.map(\.name) }
}

/// Which files of one folder are one asset (PhotoKit's multi-resource assets).
///
/// Files pair only within one folder and one group: the same base name, compared byte for byte
/// (case-sensitively, as Linux file systems do), with extensions compared case-insensitively.
/// The rules, applied to each group:
///
/// 1. **Images.** Every non-RAW image is an asset of its own. When there are several
///    (`IMG_1.JPG` and `IMG_1.HEIC`, an export next to its original), they stay separate
///    assets: their pixels differ.
/// 2. **RAW.** When the group has a non-RAW image, every RAW file joins the preferred one
///    (lowest `preference`, then name) with role `raw`: the JPEG/HEIC is the primary (its pixel
///    size is the asset's), and the asset has subtype `raw`. Without a non-RAW image, each RAW
///    is an asset of its own (primary, subtype `raw`) — so a RAW+JPEG whose JPEG is deleted
///    becomes a RAW asset.
/// 3. **Live Photos.** A video joins an image asset (role `pairedVideo`, subtype `live`) when
///    their ContentIdentifiers are both present and equal; or, when either lacks one, when both
///    capture instants are known and at most `liveToleranceMilliseconds` apart. Identifiers that
///    are both present and differ never pair, whatever the times. Identifier matches are made
///    first; then each remaining image asset (preferred first) takes the closest remaining
///    video by time (ties by name). An image asset takes at most one video; other videos are
///    assets of their own.
/// 4. **Sidecars.** `NAME.EXT.xmp` joins the asset holding `NAME.EXT` (orphaned when there is
///    no such file); `NAME.xmp` joins the group's main asset: the one with a RAW (Lightroom and
///    darktable write the base-name sidecar for the RAW), else the preferred image asset, else
///    the first video. Role `sidecar`. A sidecar without media is not an asset.
///
/// The result depends only on the set of files, never on their order.
public enum ResourcePairing {
    /// How far apart (inclusive) the still's and the video's capture instants may be for a
    /// Live Photo without identifiers. An iPhone's motion clip starts about 1.5 s before the
    /// still and QuickTime times have whole seconds, so 3 s covers a real pair; two separate
    /// shots in one folder with the same base name would have to be taken within 3 s of each other.
    public static let liveToleranceMilliseconds: Int64 = 3000

    /// Extensions that name media (lower case): they are stripped from a `NAME.EXT.xmp` sidecar
    /// to find its group, while `IMG.1.xmp` (no media extension) stays in group `IMG.1`.
    public static let mediaExtensions: Set<[UInt8]> = Set([
        "jpg", "jpeg", "jpe", "jfif", "heic", "heif", "hif", "avif", "png", "apng", "tif", "tiff", "webp", "gif",
        "bmp", "jxl", "jp2", "j2k", "bpg", "ico", "mpo", "psd", "psb",
        "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "orf", "rw2", "raw", "raf", "pef", "srw",
        "x3f", "3fr", "iiq", "erf", "kdc", "dcr", "mos", "mef", "mrw", "rwl",
        "mov", "mp4", "m4v", "3gp", "3g2", "mkv", "webm", "avi", "flv", "asf", "wmv", "mts", "m2ts", "mpg", "mpeg",
        "mng", "insv",
    ].map { Array($0.utf8) })

    /// The primary preference of an image format (`Asset.format`'s names): HEIC/HEIF 0, JPEG 1,
    /// AVIF 2, JPEG XL 3, WebP 4, PNG 5, TIFF 6, anything else 7. Camera-original formats come
    /// first: a PNG next to a JPEG of the same name is more likely a derived copy.
    public static func preference(format: String) -> Int {
        switch format {
        case "heic", "heif": return 0
        case "jpeg", "mpo": return 1
        case "avif": return 2
        case "jpegXL": return 3
        case "webp": return 4
        case "png", "apng": return 5
        case "tiff": return 6
        default: return 7
        }
    }

    /// The pairing kind of a media file from what the metadata reader found.
    public static func kind(mediaType: MediaType, format: String, isRaw: Bool) -> PairingFile.Kind {
        switch mediaType {
        case .video: return .video
        case .image: return .image(raw: isRaw, preference: isRaw ? 0 : preference(format: format))
        }
    }

    /// Whether a file name is an XMP sidecar's (`.xmp` in any case, with something before it).
    public static func isSidecarName(_ name: [UInt8]) -> Bool {
        name.count > 4 && lowercased(name.suffix(4)) == Array(".xmp".utf8)
    }

    /// The names of a group's members lie in [key, `groupNamesEnd(key)`): each is its key, or its
    /// key followed by a dot and more (the key is always a prefix of the name, cut at a dot), and
    /// `.` sorts before `/`, which no name holds. A range of the `(directory_id, name)` index, which
    /// may hold a few names of other groups (`IMG_1-2.jpg`): callers test the key too.
    public static func groupNamesEnd(_ key: [UInt8]) -> [UInt8] { key + [UInt8(ascii: "/")] }

    /// The key files are grouped by: the name without its extension (`IMG_1` for `IMG_1.JPG`,
    /// `IMG_1.CR2` and `IMG_1.MOV`), and for sidecars without `.xmp` and then without a media
    /// extension (`IMG_1` for `IMG_1.xmp` and `IMG_1.JPG.xmp`). A name without extension is its
    /// own key.
    public static func groupKey(of name: [UInt8]) -> [UInt8] {
        if isSidecarName(name) {
            let rest = Array(name.dropLast(4))
            if let dot = extensionDot(rest), mediaExtensions.contains(lowercased(rest[(dot + 1)...])) {
                return Array(rest[..<dot])
            }
            return rest
        }
        return extensionDot(name).map { Array(name[..<$0]) } ?? name
    }

    /// Groups a folder's files by `groupKey` and pairs each group: every asset of the folder,
    /// by primary name.
    public static func pairFolder(_ files: [PairingFile]) -> [PairedAsset] {
        var groups: [[UInt8]: [PairingFile]] = [:]
        for f in files { groups[groupKey(of: f.name), default: []].append(f) }
        return groups.values.flatMap { pair($0) }.sorted { $0.primary.lexicographicallyPrecedes($1.primary) }
    }

    /// The sidecars of a folder that join no asset.
    public static func orphanSidecars(_ files: [PairingFile]) -> [[UInt8]] {
        let used = Set(pairFolder(files).flatMap { $0.names(.sidecar) })
        return files.filter { $0.kind == .sidecar && !used.contains($0.name) }.map(\.name)
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Pairs the files of one group (all with the same `groupKey`) into assets, by primary
    /// name. The same files in any order give the same result.
    public static func pair(_ files: [PairingFile]) -> [PairedAsset] {
        let files = files.sorted { $0.name.lexicographicallyPrecedes($1.name) }
        var images: [(file: PairingFile, preference: Int)] = []
        var raws: [PairingFile] = []
        var videos: [PairingFile] = []
        var sidecars: [PairingFile] = []
        for f in files {
            switch f.kind {
            case .image(raw: true, _): raws.append(f)
            case .image(raw: false, let p): images.append((f, p))
            case .video: videos.append(f)
            case .sidecar: sidecars.append(f)
            }
        }
        images.sort { $0.preference != $1.preference ? $0.preference < $1.preference
            : $0.file.name.lexicographicallyPrecedes($1.file.name) }

        var assets: [Draft] = images.map { Draft(primary: $0.file) }
        if assets.isEmpty {
            assets = raws.map { Draft(primary: $0) }
        } else {
            assets[0].raws = raws
        }

        // Live Photos: identifier matches first, then the closest instants.
        var free = videos
        for i in assets.indices {
            guard let id = assets[i].contentIdentifier,
                  let j = free.firstIndex(where: { $0.contentIdentifier == id }) else { continue }
            assets[i].video = free.remove(at: j)
        }
        for i in assets.indices where assets[i].video == nil {
            guard let t = assets[i].instant else { continue }
            let ownID = assets[i].contentIdentifier
            var best: (index: Int, distance: Int64)?
            for (j, v) in free.enumerated() {
                if let a = ownID, let b = v.contentIdentifier, a != b { continue }
                guard let u = v.captureInstantMilliseconds else { continue }
                let d = t > u ? t &- u : u &- t
                guard d >= 0, d <= liveToleranceMilliseconds else { continue }
                if best.map({ d < $0.distance }) ?? true { best = (j, d) }
            }
            if let b = best { assets[i].video = free.remove(at: b.index) }
        }
        assets += free.map { Draft(primary: $0) }

        // Sidecars.
        let main = assets.indices.first { !assets[$0].raws.isEmpty || assets[$0].primary.isRaw }
            ?? assets.indices.first
        for s in sidecars {
            let target = Array(s.name.dropLast(4))
            if let dot = extensionDot(target), mediaExtensions.contains(lowercased(target[(dot + 1)...])) {
                // `NAME.EXT.xmp`: the asset holding `NAME.EXT`.
                let wanted = lowercased(target[...])
                if let i = assets.firstIndex(where: { $0.mediaNames.contains { lowercased($0[...]) == wanted } }) {
                    assets[i].sidecars.append(s.name)
                }
            } else if let i = main {
                assets[i].sidecars.append(s.name)
            }
        }
        return assets.map { $0.asset }.sorted { $0.primary.lexicographicallyPrecedes($1.primary) }
    }

    /// An asset being assembled.
    struct Draft {
        var primary: PairingFile
        var raws: [PairingFile] = []
        var video: PairingFile?
        var sidecars: [[UInt8]] = []

        init(primary: PairingFile) { self.primary = primary }

        /// The still's identifier: the primary's, else a RAW's (an iPhone ProRAW carries it).
        var contentIdentifier: String? { primary.contentIdentifier ?? raws.lazy.compactMap(\.contentIdentifier).first }
        var instant: Int64? {
            primary.captureInstantMilliseconds ?? raws.lazy.compactMap(\.captureInstantMilliseconds).first
        }
        var mediaNames: [[UInt8]] { [primary.name] + raws.map(\.name) + (video.map { [$0.name] } ?? []) }

        var asset: PairedAsset {
            var members = [PairedMember(name: primary.name, role: .primary)]
            members += raws.map { PairedMember(name: $0.name, role: .raw) }
            if let v = video { members.append(PairedMember(name: v.name, role: .pairedVideo)) }
            members += sidecars.sorted { $0.lexicographicallyPrecedes($1) }.map { PairedMember(name: $0, role: .sidecar) }
            var subtypes = Set<AssetSubtype>()
            if primary.isRaw || !raws.isEmpty { subtypes.insert(.raw) }
            if video != nil { subtypes.insert(.live) }
            return PairedAsset(primary: primary.name, mediaType: primary.kind == .video ? .video : .image,
                               members: members, subtypes: subtypes)
        }
    }

    /// The index of the dot that starts the extension: the last one, unless it is the first
    /// byte (a dot-file) or the last (no extension after it).
    static func extensionDot(_ name: some Collection<UInt8>) -> Int? {
        let b = Array(name)
        guard let dot = b.lastIndex(of: UInt8(ascii: ".")), dot > 0, dot < b.count - 1 else { return nil }
        return dot
    }

    static func lowercased(_ bytes: some Collection<UInt8>) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }
}

extension PairingFile {
    var isRaw: Bool {
        if case .image(raw: true, _) = kind { return true }
        return false
    }
}
