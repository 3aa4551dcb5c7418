/// A smart album (PhotoKit's `PHAssetCollection` of type `smartAlbum`): computed membership
/// with a fixed id, title and rule.
public struct SmartAlbum: Sendable, Hashable {
    /// The smart albums photod has, in the order clients list them.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// All Photos, Favorites, Videos, Recently Added, Screenshots, Panoramas, Selfies, Live Photos,
        /// RAW, Slo-mo, Time-lapse, Animated, Portrait, Bursts, Hidden, Recently Deleted: `SmartAlbums.all`
        /// documents each rule.
        case allPhotos, favorites, videos, recentlyAdded, screenshots, panoramas, selfies, livePhotos, raw, slomo, timelapses,
             animated, depthEffect, bursts, hidden, recentlyDeleted
    }

    /// How a smart album orders its assets.
    public enum Order: String, Sendable, Hashable, Codable {
        /// Oldest capture time first, then path bytes, then id (a moment's order).
        case captureTime
        /// Most recently indexed first, then the capture order.
        case addedNewestFirst
        /// Most recently deleted first, then the capture order.
        case deletedNewestFirst
    }

    /// Which album.
    public var kind: Kind
    /// `s_` and the kind (`s_allPhotos`, `s_favorites`, ...): fixed forever, part of the protocol.
    public var id: String
    /// English title (`All Photos`, `Recently Added`, ...).
    public var title: String
    /// PhotoKit's `PHAssetCollectionSubtype` name (`smartAlbumUserLibrary`, ...), so that
    /// clients ported from iOS recognise the album.
    public var subtype: String
    /// The membership rule in one sentence.
    public var rule: String
    /// How `collections.assets` orders the album.
    public var order: Order

    /// An album; the id is `s_` and the kind.
    public init(kind: Kind, title: String, subtype: String, rule: String, order: Order = .captureTime) {
        self.kind = kind
        self.id = "s_" + kind.rawValue
        self.title = title
        self.subtype = subtype
        self.rule = rule
        self.order = order
    }
}

/// What smart-album membership depends on, per asset.
public struct SmartAlbumFacts: Sendable, Hashable {
    /// Photo or video.
    public var mediaType: MediaType
    /// The asset's subtypes (`SubtypeRules`).
    public var subtypes: Set<AssetSubtype>
    /// Marked favorite by a user.
    public var isFavorite: Bool
    /// Marked hidden by a user.
    public var isHidden: Bool
    /// When the asset's files disappeared (Unix milliseconds); `nil` while it exists.
    public var deletedAt: Int64?
    /// When the asset was first indexed (Unix milliseconds).
    public var addedAt: Int64
    /// The photo that stands for its burst (`Asset.representsBurst`).
    public var representsBurst: Bool

    /// Facts from their fields.
    public init(mediaType: MediaType, subtypes: Set<AssetSubtype> = [], isFavorite: Bool = false, isHidden: Bool = false,
                deletedAt: Int64? = nil, addedAt: Int64, representsBurst: Bool = false) {
        self.representsBurst = representsBurst
        self.mediaType = mediaType
        self.subtypes = subtypes
        self.isFavorite = isFavorite
        self.isHidden = isHidden
        self.deletedAt = deletedAt
        self.addedAt = addedAt
    }
}

/// The fixed list of smart albums and their membership rules.
///
/// Visibility comes first: a recently deleted asset is only in Recently Deleted; a hidden one
/// (not deleted) only in Hidden. Every other album holds visible assets (neither hidden nor
/// deleted) — the same assets that count in moments and folder albums.
public enum SmartAlbums {
    /// Recently Added looks back this far from now (30 days).
    public static let recentlyAddedWindowMilliseconds: Int64 = 30 * 86_400_000

    /// Every smart album, in display order.
    public static let all: [SmartAlbum] = [
        SmartAlbum(kind: .allPhotos, title: "All Photos", subtype: "smartAlbumUserLibrary",
                   rule: "Every visible photo and video."),
        SmartAlbum(kind: .favorites, title: "Favorites", subtype: "smartAlbumFavorites",
                   rule: "Visible assets marked favorite."),
        SmartAlbum(kind: .videos, title: "Videos", subtype: "smartAlbumVideos",
                   rule: "Visible assets whose media type is video (a Live Photo is a photo)."),
        SmartAlbum(kind: .recentlyAdded, title: "Recently Added", subtype: "smartAlbumRecentlyAdded",
                   rule: "Visible assets first indexed in the last 30 days, newest first.", order: .addedNewestFirst),
        SmartAlbum(kind: .screenshots, title: "Screenshots", subtype: "smartAlbumScreenshots",
                   rule: "Visible images with subtype screenshot: a Screenshot-style file name, an EXIF UserComment "
                       + "of Screenshot, or a PNG/HEIC without camera make at a known screen size."),
        SmartAlbum(kind: .panoramas, title: "Panoramas", subtype: "smartAlbumPanoramas",
                   rule: "Visible images with subtype panorama: from a camera (EXIF Make), not a screenshot, with "
                       + "one side at least twice the other."),
        SmartAlbum(kind: .selfies, title: "Selfies", subtype: "smartAlbumSelfPortraits",
                   rule: "Visible images with subtype selfie: the EXIF LensModel names a front camera."),
        SmartAlbum(kind: .livePhotos, title: "Live Photos", subtype: "smartAlbumLivePhotos",
                   rule: "Visible images with subtype live: a still paired with its motion video."),
        SmartAlbum(kind: .raw, title: "RAW", subtype: "smartAlbumRAW",
                   rule: "Visible images with subtype raw: a camera RAW file, alone or paired with a JPEG/HEIC."),
        SmartAlbum(kind: .slomo, title: "Slo-mo", subtype: "smartAlbumSlomoVideos",
                   rule: "Visible videos with subtype highFrameRate: a nominal frame rate of 100 fps or more, or an "
                       + "Android capture rate (com.android.capture.fps) of 100 fps or more."),
        SmartAlbum(kind: .timelapses, title: "Time-lapse", subtype: "smartAlbumTimelapses",
                   rule: "Visible videos with subtype timelapse: an Android capture rate (com.android.capture.fps) "
                       + "below the stream's frame rate."),
        SmartAlbum(kind: .animated, title: "Animated", subtype: "smartAlbumAnimated",
                   rule: "Visible images with subtype animated: a GIF, APNG or WebP of more than one frame."),
        SmartAlbum(kind: .depthEffect, title: "Portrait", subtype: "smartAlbumDepthEffect",
                   rule: "Visible images with subtype depthEffect: a HEIC depth or disparity item, or a JPEG's "
                       + "depth map (Google's GDepth XMP, a Dynamic Depth container item)."),
        SmartAlbum(kind: .bursts, title: "Bursts", subtype: "smartAlbumBursts",
                   rule: "One entry per burst (photos with the same Apple BurstUUID): its representative, the first "
                       + "visible member by capture time; collections.assets on b_<burstIdentifier> lists them all."),
        SmartAlbum(kind: .hidden, title: "Hidden", subtype: "smartAlbumAllHidden",
                   rule: "Assets marked hidden and not deleted; they appear in no other collection."),
        SmartAlbum(kind: .recentlyDeleted, title: "Recently Deleted", subtype: "smartAlbumRecentlyDeleted",
                   rule: "Assets whose files disappeared in the last 30 days, kept with their user state.",
                   order: .deletedNewestFirst),
    ]

    /// The album with a given id (`s_favorites`); `nil` for unknown ids.
    public static func album(id: String) -> SmartAlbum? { all.first { $0.id == id } }

    /// The album of a kind.
    public static func album(_ kind: SmartAlbum.Kind) -> SmartAlbum { all.first { $0.kind == kind }! }

    /// Whether an asset belongs to a smart album at `now` (Unix milliseconds). Recently Added
    /// depends on the time: an asset leaves it 30 days after it was indexed, with no change to
    /// the asset itself.
    public static func contains(_ kind: SmartAlbum.Kind, _ f: SmartAlbumFacts, now: Int64) -> Bool {
        if kind == .recentlyDeleted { return f.deletedAt != nil }
        if f.deletedAt != nil { return false }
        if kind == .hidden { return f.isHidden }
        if f.isHidden { return false }
        switch kind {
        case .allPhotos: return true
        case .favorites: return f.isFavorite
        case .videos: return f.mediaType == .video
        case .recentlyAdded: return f.addedAt >= now - recentlyAddedWindowMilliseconds
        case .screenshots: return f.subtypes.contains(.screenshot)
        case .panoramas: return f.subtypes.contains(.panorama)
        case .selfies: return f.subtypes.contains(.selfie)
        case .livePhotos: return f.subtypes.contains(.live)
        case .raw: return f.subtypes.contains(.raw)
        case .slomo: return f.subtypes.contains(.highFrameRate)
        case .timelapses: return f.subtypes.contains(.timelapse)
        case .animated: return f.subtypes.contains(.animated)
        case .depthEffect: return f.subtypes.contains(.depthEffect)
        case .bursts: return f.subtypes.contains(.burst) && f.representsBurst
        case .hidden, .recentlyDeleted: return false  // decided above
        }
    }

    /// Every smart album an asset belongs to at `now`, in display order.
    public static func albums(containing f: SmartAlbumFacts, now: Int64) -> [SmartAlbum] {
        all.filter { contains($0.kind, f, now: now) }
    }
}

/// What the subtype rules read: the primary file's fields (`i.lensModel` is
/// `i.media.lensModel`), its name, and whether pairing gave it a motion video.
@dynamicMemberLookup
public struct SubtypeInputs: Sendable, Hashable {
    /// The primary file's fields.
    public var media: MediaFields
    /// The primary file's name (a full path works too: only the last component is read).
    public var fileName: [UInt8]
    /// Whether a motion video is paired (from pairing).
    public var hasPairedVideo: Bool

    public init(media: MediaFields, fileName: [UInt8] = [], hasPairedVideo: Bool = false) {
        self.media = media
        self.fileName = fileName
        self.hasPairedVideo = hasPairedVideo
    }

    /// A field of the primary file.
    public subscript<T>(dynamicMember field: KeyPath<MediaFields, T>) -> T { media[keyPath: field] }
}

/// The rules that give an asset its subtypes (PhotoKit's `PHAssetMediaSubtype`), from the
/// files' own bytes, never from a file name alone (the screenshot rule's names are the one
/// exception, as the tools that write them are).
public enum SubtypeRules {
    /// All the subtypes of an asset.
    public static func subtypes(_ i: SubtypeInputs) -> Set<AssetSubtype> {
        guard i.mediaType == .image else { return videoSubtypes(i) }
        var s = Set<AssetSubtype>()
        if i.traits.contains(.hdr) { s.insert(.hdr) }
        if i.traits.contains(.depth) { s.insert(.depthEffect) }
        if i.traits.contains(.animated) { s.insert(.animated) }
        if i.burstIdentifier != nil { s.insert(.burst) }
        if i.isRaw { s.insert(.raw) }
        if i.hasPairedVideo { s.insert(.live) }
        // Runs once per indexed image: the screenshot test is done once, not again for panoramas.
        let screenshot = isScreenshot(i)
        if screenshot { s.insert(.screenshot) }
        if !screenshot, isPanoramaShape(i) { s.insert(.panorama) }
        if isSelfie(i) { s.insert(.selfie) }
        return s
    }

    /// A video's subtypes:
    /// - `highFrameRate`: recorded at `highFrameRateMinimum` (100) fps or more — its nominal
    ///   frame rate (an iPhone's slo-mo track is 120 or 240 fps), or Android's
    ///   `com.android.capture.fps` (a phone's slo-mo plays at 30 and records at 120 or 240);
    /// - `timelapse`: Android's `com.android.capture.fps` below the stream's frame rate (by more
    ///   than 1 %: a normal clip says the same rate as it plays). Apple's time-lapse files carry
    ///   no marker found in any file at hand; they are not detected;
    /// - `hdr`: a PQ or HLG transfer at 10 bits or more (the reader's `hdr` trait).
    ///
    /// The rate rules need a recording: a video with a duration (a header that claims 100 fps
    /// over no frames at all, as test files do, is no slow motion).
    public static func videoSubtypes(_ i: SubtypeInputs) -> Set<AssetSubtype> {
        var s = Set<AssetSubtype>()
        let rate = i.frameRate ?? 0, capture = i.captureFrameRate ?? 0
        if (i.duration ?? 0) > 0 {
            if rate >= highFrameRateMinimum || capture >= highFrameRateMinimum { s.insert(.highFrameRate) }
            if capture > 0, rate > 0, capture < rate * 0.99 { s.insert(.timelapse) }
        }
        if i.traits.contains(.hdr) { s.insert(.hdr) }
        return s
    }

    /// Frames per second from which a video is slow motion.
    public static let highFrameRateMinimum = 100.0

    /// A screenshot is a non-RAW image with any of:
    /// - a file name that starts with a screenshot tool's prefix (`screenshotNamePrefixes`,
    ///   ASCII letters compared case-insensitively): Android, GNOME, KDE, Windows' Snipping Tool
    ///   and macOS in several languages name their files so;
    /// - an EXIF UserComment of `Screenshot` (what iOS writes), case-insensitively, ignoring
    ///   surrounding spaces and NULs;
    /// - format PNG or HEIC/HEIF (what phones save screenshots as), no camera make, and a pixel
    ///   size (either orientation) in `screenSizes`. JPEG is left out of this rule: a make-less
    ///   1920×1080 JPEG is as likely an export or a wallpaper as a screenshot.
    public static func isScreenshot(_ i: SubtypeInputs) -> Bool {
        guard i.mediaType == .image, !i.isRaw else { return false }
        if hasScreenshotName(i.fileName) { return true }
        if let c = i.userComment, asciiLowercased(trimmed(c)) == "screenshot" { return true }
        guard isScreenFormat(i.format), !hasMake(i),
              let w = i.pixelWidth, let h = i.pixelHeight else { return false }
        return screenSizes.contains(ScreenSize(min(w, h), max(w, h)))
    }

    /// A panorama is an image from a camera (a non-blank EXIF Make: phones write theirs into
    /// stitched panoramas too), not a screenshot (tall phone screens are 2.2:1), whose longer
    /// side is at least twice the shorter (`panoramaMinimumAspect`), either way round.
    public static func isPanorama(_ i: SubtypeInputs) -> Bool {
        !isScreenshot(i) && isPanoramaShape(i)
    }

    /// A camera image at least twice as long as it is high (either way round).
    static func isPanoramaShape(_ i: SubtypeInputs) -> Bool {
        guard i.mediaType == .image, let w = i.pixelWidth, let h = i.pixelHeight, w > 0, h > 0,
              max(w, h) >= panoramaMinimumAspect * min(w, h) else { return false }
        return hasMake(i)
    }

    /// Longer side over shorter side from which an image is a panorama (2:1).
    public static let panoramaMinimumAspect = 2

    /// A selfie is an image whose EXIF LensModel contains `front` (ASCII, any case), as
    /// iPhones write it (`iPhone 12 front camera 2.71mm f/2.2`, `iPhone X front TrueDepth camera
    /// 2.87mm f/2.2`) and several Android phones too.
    public static func isSelfie(_ i: SubtypeInputs) -> Bool {
        guard i.mediaType == .image, let lens = i.lensModel else { return false }
        return containsASCIIFolded(lens.utf8, "front")
    }

    /// File-name prefixes of screenshot tools: English (Android, GNOME, macOS ≥ 10.14 and
    /// older `Screen Shot `, Windows), German, French, Spanish, Italian, Dutch, Swedish,
    /// Polish, Japanese, Chinese and Korean macOS/phones.
    public static let screenshotNamePrefixes: [String] = [
        "screenshot", "screen shot ", "bildschirmfoto", "capture d\u{2019}\u{E9}cran", "capture d'\u{E9}cran",
        "captura de pantalla", "schermata", "schermafbeelding", "sk\u{E4}rmavbild", "zrzut ekranu",
        "\u{30B9}\u{30AF}\u{30EA}\u{30FC}\u{30F3}\u{30B7}\u{30E7}\u{30C3}\u{30C8}",  // スクリーンショット
        "\u{622A}\u{5C4F}", "\u{5C4F}\u{5E55}\u{622A}\u{56FE}",  // 截屏, 屏幕截图
        "\u{C2A4}\u{D06C}\u{B9B0}\u{C0F7}",  // 스크린샷
    ]

    /// A screen resolution, shorter side first.
    public struct ScreenSize: Sendable, Hashable {
        /// The shorter side in pixels.
        public var short: Int
        /// The longer side in pixels.
        public var long: Int
        /// A size, shorter side first.
        public init(_ short: Int, _ long: Int) {
            self.short = short
            self.long = long
        }
    }

    /// Screen resolutions (shorter side first) whose screenshots phones, tablets and desktops
    /// save: every iPhone and iPad generation, common Android panels, and common desktop and
    /// laptop panels.
    public static let screenSizes: Set<ScreenSize> = Set([
        // iPhone: 3GS, 4, 5/SE, 6–8/SE2–3, 6+–8+, X/XS/11 Pro, XR/11, XS Max/11 Pro Max, 12/13 mini,
        // 12–14, 12–13 Pro Max/14 Plus, 14 Pro–16, 14 Pro Max–16 Plus, 16 Pro, 16 Pro Max.
        (320, 480), (640, 960), (640, 1136), (750, 1334), (1242, 2208), (1125, 2436), (828, 1792), (1242, 2688),
        (1080, 2340), (1170, 2532), (1284, 2778), (1179, 2556), (1290, 2796), (1206, 2622), (1320, 2868),
        // iPad: 1/2/mini, Retina, 10.5", 11", 12.9", 10.2", 10.9"/Air, mini 6, 11" M4, 13" M4.
        (768, 1024), (1536, 2048), (1668, 2224), (1668, 2388), (2048, 2732), (1620, 2160), (1640, 2360),
        (1488, 2266), (1668, 2420), (2064, 2752),
        // Android phones and tablets.
        (480, 800), (540, 960), (720, 1280), (720, 1520), (720, 1600), (1080, 1920), (1080, 2160), (1080, 2220),
        (1080, 2280), (1080, 2310), (1080, 2400), (1080, 2408), (1080, 2412), (1440, 2560), (1440, 2960),
        (1440, 3040), (1440, 3088), (1440, 3120), (1440, 3200), (1344, 2992), (1280, 2856), (800, 1280),
        (1200, 1920), (1600, 2560),
        // Desktops and laptops (1920×1080 and 1080×1920 are the same entry).
        (720, 1280), (800, 1280), (1024, 1280), (768, 1366), (900, 1440), (864, 1536), (900, 1600), (1050, 1680),
        (1200, 1920), (1504, 2256), (1080, 2560), (1440, 2560), (1600, 2560), (1664, 2560), (1824, 2736),
        (1800, 2880), (2000, 3000), (1964, 3024), (1440, 3440), (2234, 3456), (2160, 3840), (2880, 5120),
        (3384, 6016),
    ].map { ScreenSize($0.0, $0.1) })

    /// The formats phones and desktops save screenshots in.
    static func isScreenFormat(_ format: String) -> Bool {
        switch format {
        case "png", "apng", "heic", "heif": return true
        default: return false
        }
    }

    static func hasMake(_ i: SubtypeInputs) -> Bool {
        guard let make = i.make else { return false }
        // Runs for every image: bytes, not Characters.
        return make.utf8.contains { $0 != 0x20 && $0 != 0 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
    }

    static func hasScreenshotName(_ name: [UInt8]) -> Bool {
        let start = name.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        let base = name[start...]
        // Most names start with a byte no prefix starts with (`IMG_`, `DSC`): one test.
        guard let first = base.first, screenshotPrefixFirstBytes.contains(first >= 0x41 && first <= 0x5A ? first | 0x20 : first)
        else { return false }
        return screenshotPrefixBytes.contains { prefix in
            guard base.count >= prefix.count else { return false }
            return zip(base, prefix).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
        }
    }

    /// `screenshotNamePrefixes` as UTF-8 bytes (they are lower case already).
    static let screenshotPrefixBytes: [[UInt8]] = screenshotNamePrefixes.map { Array($0.utf8) }

    /// The first bytes of `screenshotPrefixBytes`.
    static let screenshotPrefixFirstBytes: Set<UInt8> = Set(screenshotPrefixBytes.compactMap(\.first))

    static func trimmed(_ s: String) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\0" || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        var sub = s[...]
        while let c = sub.first, isBlank(c) { sub = sub.dropFirst() }
        while let c = sub.last, isBlank(c) { sub = sub.dropLast() }
        return sub
    }

    /// Whether `text` contains `word` (lower-case ASCII), ASCII letters compared in any case.
    /// Runs for every image with a lens model: bytes, no string made.
    static func containsASCIIFolded(_ text: String.UTF8View, _ word: StaticString) -> Bool {
        word.withUTF8Buffer { w in
            guard let first = w.first else { return true }
            var i = text.startIndex
            while i != text.endIndex {
                if text[i] | 0x20 == first {
                    var j = i, k = 0
                    while k < w.count, j != text.endIndex {
                        let c = text[j]
                        guard (c >= 0x41 && c <= 0x5A ? c | 0x20 : c) == w[k] else { break }
                        k += 1
                        j = text.index(after: j)
                    }
                    if k == w.count { return true }
                }
                i = text.index(after: i)
            }
            return false
        }
    }

    static func asciiLowercased(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    static func asciiLowercased(_ s: some StringProtocol) -> String {
        String(decoding: asciiLowercased(s.utf8), as: UTF8.self)
    }
}
