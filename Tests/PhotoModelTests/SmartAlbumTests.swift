import PhotoModel
import Testing

@Suite("Smart albums and subtype rules")
struct SmartAlbumTests {
    @Test("Fixed ids, titles and PhotoKit subtypes")
    func table() {
        #expect(SmartAlbums.all.map(\.id) == [
            "s_allPhotos", "s_favorites", "s_videos", "s_recentlyAdded", "s_screenshots", "s_panoramas", "s_selfies",
            "s_livePhotos", "s_raw", "s_slomo", "s_timelapses", "s_animated", "s_depthEffect", "s_bursts", "s_hidden",
            "s_recentlyDeleted",
        ])
        #expect(SmartAlbums.all.map(\.title) == [
            "All Photos", "Favorites", "Videos", "Recently Added", "Screenshots", "Panoramas", "Selfies", "Live Photos",
            "RAW", "Slo-mo", "Time-lapse", "Animated", "Portrait", "Bursts", "Hidden", "Recently Deleted",
        ])
        #expect(SmartAlbums.all.map(\.subtype) == [
            "smartAlbumUserLibrary", "smartAlbumFavorites", "smartAlbumVideos", "smartAlbumRecentlyAdded",
            "smartAlbumScreenshots", "smartAlbumPanoramas", "smartAlbumSelfPortraits", "smartAlbumLivePhotos",
            "smartAlbumRAW", "smartAlbumSlomoVideos", "smartAlbumTimelapses", "smartAlbumAnimated", "smartAlbumDepthEffect",
            "smartAlbumBursts", "smartAlbumAllHidden", "smartAlbumRecentlyDeleted",
        ])
        #expect(SmartAlbums.all.map(\.kind) == SmartAlbum.Kind.allCases)
        #expect(SmartAlbums.all.allSatisfy { !$0.rule.isEmpty && $0.rule.hasSuffix(".") })
        #expect(SmartAlbums.album(id: "s_favorites")?.title == "Favorites")
        #expect(SmartAlbums.album(id: "s_nope") == nil)
        #expect(SmartAlbums.album(.recentlyAdded).order == .addedNewestFirst)
        #expect(SmartAlbums.album(.recentlyDeleted).order == .deletedNewestFirst)
        #expect(SmartAlbums.album(.allPhotos).order == .captureTime)
    }

    @Test("Membership: hidden only in Hidden, deleted only in Recently Deleted")
    func membership() {
        let day: Int64 = 86_400_000
        let now: Int64 = 1_700_000_000_000
        func ids(_ f: SmartAlbumFacts) -> [String] { SmartAlbums.albums(containing: f, now: now).map(\.id) }
        let old = now - 31 * day
        #expect(ids(SmartAlbumFacts(mediaType: .image, addedAt: old)) == ["s_allPhotos"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, addedAt: now - 30 * day)) == ["s_allPhotos", "s_recentlyAdded"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, addedAt: now - 30 * day - 1)) == ["s_allPhotos"])
        #expect(ids(SmartAlbumFacts(mediaType: .video, isFavorite: true, addedAt: old))
                == ["s_allPhotos", "s_favorites", "s_videos"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, subtypes: Set(AssetSubtype.allCases), addedAt: old))
                == ["s_allPhotos", "s_screenshots", "s_panoramas", "s_selfies", "s_livePhotos", "s_raw", "s_slomo", "s_timelapses",
                    "s_animated", "s_depthEffect"])
        // A burst's member is in Bursts only as its representative.
        #expect(ids(SmartAlbumFacts(mediaType: .image, subtypes: [.burst], addedAt: old)) == ["s_allPhotos"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, subtypes: [.burst], addedAt: old, representsBurst: true))
                == ["s_allPhotos", "s_bursts"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, subtypes: [.raw], isFavorite: true, isHidden: true, addedAt: now))
                == ["s_hidden"])
        #expect(ids(SmartAlbumFacts(mediaType: .image, isFavorite: true, isHidden: true, deletedAt: now, addedAt: now))
                == ["s_recentlyDeleted"])
        #expect(ids(SmartAlbumFacts(mediaType: .video, deletedAt: now - day, addedAt: old)) == ["s_recentlyDeleted"])
    }

    static func inputs(_ format: String, _ w: Int?, _ h: Int?, make: String? = nil, lens: String? = nil,
                       comment: String? = nil, name: String = "IMG_0001.PNG", video: Bool = false,
                       raw: Bool = false, live: Bool = false) -> SubtypeInputs {
        SubtypeInputs(media: MediaFields(mediaType: video ? .video : .image, format: format, isRaw: raw,
                                         captureDate: CaptureDate(local: LocalDateTime(iso: "2024-05-01T12:00:00")!,
                                                                  offset: nil, source: .exifOriginal),
                                         pixelWidth: w, pixelHeight: h, make: make, lensModel: lens, userComment: comment),
                      fileName: Array(name.utf8), hasPairedVideo: live)
    }

    static func video(rate: Double?, capture: Double? = nil, traits: MediaTraits = [], duration: Double? = 12.5) -> SubtypeInputs {
        var i = inputs("mp4", 1920, 1080, make: "Google", name: "PXL_20240501_120000000.mp4", video: true)
        i.media.duration = duration
        i.media.frameRate = rate
        i.media.captureFrameRate = capture
        i.media.traits = traits
        return i
    }

    @Test("Video subtypes: slow motion by its frame rate or Android's capture rate, time-lapse by a capture rate below the frame rate, HDR by its transfer")
    func videoSubtypes() {
        #expect(SubtypeRules.subtypes(Self.video(rate: 240)) == [.highFrameRate])
        #expect(SubtypeRules.subtypes(Self.video(rate: 120.0)) == [.highFrameRate])
        #expect(SubtypeRules.subtypes(Self.video(rate: 100)) == [.highFrameRate])
        #expect(SubtypeRules.subtypes(Self.video(rate: 60)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 99.9)) == [])
        // Android's slo-mo: recorded at 120 or 240, plays at 30.
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 120)) == [.highFrameRate])
        // A normal clip says its own rate (Samsung writes 30 for a 29.97 clip): not a time-lapse.
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 30)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 29.97, capture: 30)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 29.97)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 1)) == [.timelapse])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 0.5)) == [.timelapse])
        #expect(SubtypeRules.subtypes(Self.video(rate: nil, capture: 1)) == [])
        // A header's rate over no recording (a test file's 100 fps AVI without frames).
        #expect(SubtypeRules.subtypes(Self.video(rate: 100, duration: nil)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, capture: 1, duration: 0)) == [])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, traits: .hdr, duration: nil)) == [.hdr])
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, traits: .hdr)) == [.hdr])
        // Traits only images carry mean nothing on a video.
        #expect(SubtypeRules.subtypes(Self.video(rate: 30, traits: [.depth, .animated])) == [])
        // A video's name alone gives nothing.
        var named = Self.video(rate: 30)
        named.fileName = Array("VID_20240501_SLOMO_timelapse.mp4".utf8)
        #expect(SubtypeRules.subtypes(named) == [])
    }

    @Test("Image subtypes from traits: HDR, depth effect, animated; a frame rate means nothing on an image")
    func imageTraits() {
        var i = Self.inputs("heic", 4032, 3024, make: "Apple")
        #expect(SubtypeRules.subtypes(i) == [])
        i.media.traits = [.hdr, .depth]
        #expect(SubtypeRules.subtypes(i) == [.hdr, .depthEffect])
        i.media.traits = .animated
        i.media.frameRate = 240
        #expect(SubtypeRules.subtypes(i) == [.animated])
        i.media.traits = []
        i.media.burstIdentifier = "6A2F1C3E-8D4B-4F1A-9C2E-7B5D3A1F0E9C"
        #expect(SubtypeRules.subtypes(i) == [.burst])
    }

    @Test("Subtype rules on real-world values", arguments: [
        // Screenshots by size: PNG/HEIC without make.
        ("iPhone 12 screenshot", inputs("png", 1170, 2532), "screenshot"),
        ("iPhone 15 Pro landscape screenshot", inputs("png", 2556, 1179), "screenshot"),
        ("iPhone SE screenshot as HEIC", inputs("heic", 750, 1334), "screenshot"),
        ("iPad Pro 12.9 screenshot", inputs("png", 2048, 2732), "screenshot"),
        ("Pixel 7 screenshot", inputs("png", 1080, 2400), "screenshot"),
        ("Galaxy S22 Ultra screenshot", inputs("png", 1440, 3088), "screenshot"),
        ("1080p desktop", inputs("png", 1920, 1080), "screenshot"),
        ("1366x768 laptop", inputs("png", 1366, 768), "screenshot"),
        ("MacBook Pro 14 Retina", inputs("png", 3024, 1964), "screenshot"),
        ("4K monitor", inputs("png", 3840, 2160), "screenshot"),
        ("PNG at an odd size", inputs("png", 1000, 700), ""),
        ("a PNG with a camera make", inputs("png", 1920, 1080, make: "Apple"), ""),
        ("a make that is blank is no make", inputs("png", 1920, 1080, make: "  \0"), "screenshot"),
        ("a make-less 1080p JPEG is not assumed a screenshot", inputs("jpeg", 1920, 1080, name: "wallpaper.jpg"), ""),
        ("an iPhone HEIC photo", inputs("heic", 4032, 3024, make: "Apple", lens: "iPhone 12 back dual wide camera 4.2mm f/1.6"), ""),
        // Screenshots by comment and by name.
        ("iOS UserComment", inputs("jpeg", 1000, 700, comment: "Screenshot"), "screenshot"),
        ("UserComment with padding", inputs("png", 10, 10, comment: "  screenshot\0\0"), "screenshot"),
        ("another UserComment", inputs("jpeg", 1000, 700, comment: "Screenshots are fun"), ""),
        ("Android name", inputs("jpeg", 1000, 700, name: "Screenshot_20230504-132210.jpg"), "screenshot"),
        ("macOS name", inputs("jpeg", nil, nil, name: "Screenshot 2023-05-04 at 13.22.10.png"), "screenshot"),
        ("old macOS name", inputs("png", nil, nil, name: "Screen Shot 2018-05-04 at 13.22.10.png"), "screenshot"),
        ("GNOME name", inputs("png", nil, nil, name: "Screenshot from 2023-05-04 13-22-10.png"), "screenshot"),
        ("German macOS", inputs("png", nil, nil, name: "Bildschirmfoto 2023-05-04 um 13.22.10.png"), "screenshot"),
        ("French macOS", inputs("png", nil, nil, name: "Capture d\u{2019}\u{E9}cran 2023-05-04 \u{E0} 13.22.10.png"), "screenshot"),
        ("lower-case name in a path", inputs("png", nil, nil, name: "/srv/photos/phone/screenshot_1.png"), "screenshot"),
        ("a folder named Screenshots is not the file name", inputs("jpeg", 4000, 3000, make: "Canon", name: "/x/Screenshots/IMG_1.JPG"), ""),
        ("Screencast video", inputs("mp4", 1920, 1080, name: "Screenshot_video.mp4", video: true), ""),
        // Panoramas.
        ("iPhone panorama", inputs("heic", 16_128, 3_872, make: "Apple", lens: "iPhone 13 back camera 5.1mm f/1.6"), "panorama"),
        ("vertical panorama", inputs("jpeg", 3000, 9000, make: "samsung"), "panorama"),
        ("exactly 2:1 from a camera", inputs("jpeg", 6000, 3000, make: "SONY"), "panorama"),
        ("just under 2:1", inputs("jpeg", 5999, 3000, make: "SONY"), ""),
        ("16:9 camera photo", inputs("jpeg", 4000, 2250, make: "FUJIFILM"), ""),
        ("a stitched panorama without make", inputs("jpeg", 12000, 3000), ""),
        ("a tall phone screenshot with a make is still a screenshot", inputs("png", 1080, 2400, make: "Google", name: "Screenshot_1.png"), "screenshot"),
        // Selfies.
        ("iPhone front camera", inputs("heic", 3088, 2316, make: "Apple", lens: "iPhone 12 front camera 2.71mm f/2.2"), "selfie"),
        ("iPhone X TrueDepth", inputs("jpeg", 3088, 2320, make: "Apple", lens: "iPhone X front TrueDepth camera 2.87mm f/2.2"), "selfie"),
        ("FRONT in capitals", inputs("jpeg", 100, 100, make: "Google", lens: "Pixel 7 FRONT CAMERA"), "selfie"),
        ("back camera", inputs("heic", 4032, 3024, make: "Apple", lens: "iPhone 12 back camera 4.2mm f/1.6"), ""),
        ("a DSLR lens", inputs("jpeg", 6000, 4000, make: "Canon", lens: "EF24-105mm f/4L IS USM"), ""),
        // From pairing.
        ("RAW", inputs("jpeg", 6000, 4000, make: "Canon", raw: true), "raw"),
        ("RAW named like a screenshot is still not one", inputs("cr2", 6000, 4000, make: "Canon", name: "Screenshot.CR2", raw: true), "raw"),
        ("Live Photo selfie", inputs("heic", 3088, 2316, make: "Apple", lens: "iPhone 12 front camera 2.71mm f/2.2", live: true),
         "live,selfie"),
        ("videos have no subtypes", inputs("mov", 1080, 1920, make: "Apple", lens: "iPhone 12 front camera", video: true, live: true), ""),
    ] as [(String, SubtypeInputs, String)])
    func rules(_ label: String, inputs: SubtypeInputs, expected: String) {
        let got = SubtypeRules.subtypes(inputs).map(\.rawValue).sorted().joined(separator: ",")
        #expect(got == expected, "\(label)")
    }

    @Test("Every screen size is listed shorter side first")
    func screenSizes() {
        #expect(SubtypeRules.screenSizes.allSatisfy { $0.short <= $0.long })
        #expect(SubtypeRules.screenSizes.contains(.init(1080, 1920)))
        #expect(SubtypeRules.screenSizes.count > 60)
    }
}
