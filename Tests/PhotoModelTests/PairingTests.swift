import PhotoModel
import PhotoTesting
import Testing

@Suite("Resource pairing")
struct PairingTests {
    static let heic = PairingFile.Kind.image(raw: false, preference: ResourcePairing.preference(format: "heic"))
    static let jpeg = PairingFile.Kind.image(raw: false, preference: ResourcePairing.preference(format: "jpeg"))
    static let png = PairingFile.Kind.image(raw: false, preference: ResourcePairing.preference(format: "png"))
    static let raw = PairingFile.Kind.image(raw: true, preference: 0)
    static let t0: Int64 = 1_556_976_130_000  // 2019-05-04T13:22:10Z

    /// `IMG_1.HEIC+raw:IMG_1.CR2+pairedVideo:IMG_1.MOV+sidecar:IMG_1.xmp{live,raw}`, one line
    /// per asset: what a table can compare at a glance.
    static func render(_ assets: [PairedAsset]) -> [String] {
        assets.map { a in
            var s = String(decoding: a.primary, as: UTF8.self)
            #expect(a.members.first == PairedMember(name: a.primary, role: .primary))
            for m in a.members.dropFirst() { s += "+\(m.role.rawValue):" + String(decoding: m.name, as: UTF8.self) }
            if !a.subtypes.isEmpty { s += "{" + a.subtypes.map(\.rawValue).sorted().joined(separator: ",") + "}" }
            if a.mediaType == .video { s += " video" }
            return s
        }
    }

    static func f(_ name: String, _ kind: PairingFile.Kind, id: String? = nil, at: Int64? = nil) -> PairingFile {
        PairingFile(name, kind, contentIdentifier: id, captureInstantMilliseconds: at)
    }

    @Test("Group keys", arguments: [
        ("IMG_1.JPG", "IMG_1"), ("IMG_1.cr2", "IMG_1"), ("IMG_1.MOV", "IMG_1"), ("IMG_1.xmp", "IMG_1"),
        ("IMG_1.XMP", "IMG_1"), ("IMG_1.JPG.xmp", "IMG_1"), ("IMG_1.jpg.XMP", "IMG_1"), ("IMG_1.CR2.xmp", "IMG_1"),
        ("IMG.1.jpg", "IMG.1"), ("IMG.1.xmp", "IMG.1"), ("IMG.1.jpg.xmp", "IMG.1"), ("IMG_1", "IMG_1"),
        ("IMG_1.", "IMG_1."), ("a.b.c.MOV", "a.b.c"), ("photo.edit.xmp", "photo.edit"), ("x.xmp.xmp", "x.xmp"),
        ("Screenshot 2023-05-04 at 13.22.10.png", "Screenshot 2023-05-04 at 13.22.10"),
    ])
    func groupKeys(name: String, key: String) {
        #expect(ResourcePairing.groupKey(of: Array(name.utf8)) == Array(key.utf8))
    }

    @Test("Group keys of names that are not UTF-8")
    func nonUTF8() {
        let name: [UInt8] = [0x49, 0xFF, 0xFE, 0x2E, 0x4A, 0x50, 0x47]  // "I\xFF\xFE.JPG"
        #expect(ResourcePairing.groupKey(of: name) == [0x49, 0xFF, 0xFE])
        #expect(ResourcePairing.groupKey(of: name + Array(".xmp".utf8)) == [0x49, 0xFF, 0xFE])
        let assets = ResourcePairing.pair([PairingFile(name: name, kind: Self.jpeg),
                                           PairingFile(name: [0x49, 0xFF, 0xFE] + Array(".CR2".utf8), kind: Self.raw)])
        #expect(assets.count == 1)
        #expect(assets.first?.primary == name)
        #expect(assets.first?.subtypes == [.raw])
    }

    @Test("Pairing rules", arguments: [
        // RAW + JPEG/HEIC: one asset, the JPEG/HEIC primary.
        ("RAW+JPEG", [f("IMG_1.JPG", jpeg), f("IMG_1.CR2", raw)], ["IMG_1.JPG+raw:IMG_1.CR2{raw}"]),
        ("RAW+HEIC, lower case", [f("img_2.dng", raw), f("img_2.heic", heic)], ["img_2.heic+raw:img_2.dng{raw}"]),
        ("extension case differs", [f("IMG_1.jpg", jpeg), f("IMG_1.CR2", raw)], ["IMG_1.jpg+raw:IMG_1.CR2{raw}"]),
        ("RAW alone (its JPEG deleted)", [f("IMG_1.CR2", raw)], ["IMG_1.CR2{raw}"]),
        ("two RAWs alone", [f("IMG_1.CR2", raw), f("IMG_1.DNG", raw)], ["IMG_1.CR2{raw}", "IMG_1.DNG{raw}"]),
        ("two RAWs join the JPEG", [f("IMG_1.DNG", raw), f("IMG_1.CR2", raw), f("IMG_1.JPG", jpeg)],
         ["IMG_1.JPG+raw:IMG_1.CR2+raw:IMG_1.DNG{raw}"]),
        ("JPEG+HEIC+RAW: two assets, the RAW with the HEIC",
         [f("IMG_1.JPG", jpeg), f("IMG_1.HEIC", heic), f("IMG_1.CR2", raw)],
         ["IMG_1.HEIC+raw:IMG_1.CR2{raw}", "IMG_1.JPG"]),
        ("JPEG+PNG: two assets", [f("a.png", png), f("a.jpg", jpeg)], ["a.jpg", "a.png"]),
        ("JPG and jpg are two files", [f("a.JPG", jpeg), f("a.jpg", jpeg)], ["a.JPG", "a.jpg"]),
        ("video alone", [f("IMG_1.MOV", .video)], ["IMG_1.MOV video"]),
        ("image alone", [f("IMG_1.HEIC", heic)], ["IMG_1.HEIC"]),

        // Live Photos.
        ("identifiers agree", [f("IMG_1.HEIC", heic, id: "A"), f("IMG_1.MOV", .video, id: "A")],
         ["IMG_1.HEIC+pairedVideo:IMG_1.MOV{live}"]),
        ("identifiers agree, times far apart", [f("IMG_1.HEIC", heic, id: "A", at: t0), f("IMG_1.MOV", .video, id: "A", at: t0 + 3_600_000)],
         ["IMG_1.HEIC+pairedVideo:IMG_1.MOV{live}"]),
        ("identifiers differ, same instant", [f("IMG_1.HEIC", heic, id: "A", at: t0), f("IMG_1.MOV", .video, id: "B", at: t0)],
         ["IMG_1.HEIC", "IMG_1.MOV video"]),
        ("identifier on the still only, 1.5 s apart", [f("IMG_1.JPG", jpeg, id: "A", at: t0), f("IMG_1.MOV", .video, at: t0 - 1500)],
         ["IMG_1.JPG+pairedVideo:IMG_1.MOV{live}"]),
        ("identifier on the video only, 3 s apart", [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.mp4", .video, id: "A", at: t0 + 3000)],
         ["IMG_1.JPG+pairedVideo:IMG_1.mp4{live}"]),
        ("no identifiers, 3.001 s apart", [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.MOV", .video, at: t0 + 3001)],
         ["IMG_1.JPG", "IMG_1.MOV video"]),
        ("no identifiers, same instant", [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.MOV", .video, at: t0)],
         ["IMG_1.JPG+pairedVideo:IMG_1.MOV{live}"]),
        ("no identifiers, no instants", [f("IMG_1.JPG", jpeg), f("IMG_1.MOV", .video)], ["IMG_1.JPG", "IMG_1.MOV video"]),
        ("an instant on one side only", [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.MOV", .video)], ["IMG_1.JPG", "IMG_1.MOV video"]),
        ("two videos: the identifier wins over the closer time",
         [f("IMG_1.HEIC", heic, id: "A", at: t0), f("IMG_1.MOV", .video, id: "A", at: t0 + 2000), f("IMG_1.MP4", .video, at: t0)],
         ["IMG_1.HEIC+pairedVideo:IMG_1.MOV{live}", "IMG_1.MP4 video"]),
        ("two videos without identifiers: the closer one",
         [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.MOV", .video, at: t0 + 2000), f("IMG_1.MP4", .video, at: t0 - 1000)],
         ["IMG_1.JPG+pairedVideo:IMG_1.MP4{live}", "IMG_1.MOV video"]),
        ("two videos equally close: by name",
         [f("IMG_1.JPG", jpeg, at: t0), f("IMG_1.MP4", .video, at: t0 + 1000), f("IMG_1.MOV", .video, at: t0 - 1000)],
         ["IMG_1.JPG+pairedVideo:IMG_1.MOV{live}", "IMG_1.MP4 video"]),
        ("RAW+HEIC+MOV", [f("IMG_1.DNG", raw), f("IMG_1.HEIC", heic, id: "A"), f("IMG_1.MOV", .video, id: "A")],
         ["IMG_1.HEIC+raw:IMG_1.DNG+pairedVideo:IMG_1.MOV{live,raw}"]),
        ("JPEG+HEIC share a video by identifier: the preferred one takes it",
         [f("IMG_1.JPG", jpeg, id: "A"), f("IMG_1.HEIC", heic, id: "A"), f("IMG_1.MOV", .video, id: "A")],
         ["IMG_1.HEIC+pairedVideo:IMG_1.MOV{live}", "IMG_1.JPG"]),
        ("identifier on a ProRAW alone", [f("IMG_1.DNG", raw, id: "A"), f("IMG_1.MOV", .video, id: "A")],
         ["IMG_1.DNG+pairedVideo:IMG_1.MOV{live,raw}"]),

        // Sidecars.
        ("NAME.xmp", [f("IMG_1.JPG", jpeg), f("IMG_1.xmp", .sidecar)], ["IMG_1.JPG+sidecar:IMG_1.xmp"]),
        ("NAME.EXT.xmp, any case", [f("IMG_1.JPG", jpeg), f("IMG_1.jpg.XMP", .sidecar)], ["IMG_1.JPG+sidecar:IMG_1.jpg.XMP"]),
        ("both forms", [f("IMG_1.JPG", jpeg), f("IMG_1.xmp", .sidecar), f("IMG_1.JPG.xmp", .sidecar)],
         ["IMG_1.JPG+sidecar:IMG_1.JPG.xmp+sidecar:IMG_1.xmp"]),
        ("a sidecar alone is not an asset", [f("IMG_1.xmp", .sidecar)], []),
        ("NAME.EXT.xmp without NAME.EXT is an orphan", [f("IMG_1.JPG", jpeg), f("IMG_1.CR2.xmp", .sidecar)], ["IMG_1.JPG"]),
        ("NAME.xmp joins the asset with the RAW", [f("IMG_1.JPG", jpeg), f("IMG_1.HEIC", heic), f("IMG_1.NEF", raw),
                                                    f("IMG_1.xmp", .sidecar)],
         ["IMG_1.HEIC+raw:IMG_1.NEF+sidecar:IMG_1.xmp{raw}", "IMG_1.JPG"]),
        ("NAME.xmp joins the preferred image", [f("IMG_1.JPG", jpeg), f("IMG_1.HEIC", heic), f("IMG_1.xmp", .sidecar)],
         ["IMG_1.HEIC+sidecar:IMG_1.xmp", "IMG_1.JPG"]),
        ("NAME.EXT.xmp follows its file", [f("IMG_1.JPG", jpeg), f("IMG_1.HEIC", heic), f("IMG_1.JPG.xmp", .sidecar)],
         ["IMG_1.HEIC", "IMG_1.JPG+sidecar:IMG_1.JPG.xmp"]),
        ("a RAW's darktable sidecar", [f("IMG_1.JPG", jpeg), f("IMG_1.CR2", raw), f("IMG_1.CR2.xmp", .sidecar)],
         ["IMG_1.JPG+raw:IMG_1.CR2+sidecar:IMG_1.CR2.xmp{raw}"]),
        ("a video's sidecar", [f("VID_1.MP4", .video), f("VID_1.xmp", .sidecar)], ["VID_1.MP4+sidecar:VID_1.xmp video"]),
        ("a Live Photo video's sidecar", [f("IMG_1.HEIC", heic, id: "A"), f("IMG_1.MOV", .video, id: "A"), f("IMG_1.MOV.xmp", .sidecar)],
         ["IMG_1.HEIC+pairedVideo:IMG_1.MOV+sidecar:IMG_1.MOV.xmp{live}"]),
        ("names without extension", [f("IMG_1", jpeg), f("IMG_1.MOV", .video, id: "A")], ["IMG_1", "IMG_1.MOV video"]),
    ] as [(String, [PairingFile], [String])])
    func rules(_ label: String, files: [PairingFile], expected: [String]) {
        #expect(Self.render(ResourcePairing.pair(files)) == expected, "\(label)")
        // The same files in any order give the same assets.
        #expect(Self.render(ResourcePairing.pair(files.reversed())) == expected, "\(label), reversed")
        var g = SplitMix64(seed: UInt64(files.count))
        for _ in 0..<5 {
            #expect(ResourcePairing.pair(files.shuffled(using: &g)) == ResourcePairing.pair(files), "\(label), shuffled")
        }
    }

    @Test("A folder: grouping, pairing and orphan sidecars")
    func folder() {
        let t0 = Self.t0
        let files = [
            Self.f("IMG_0001.JPG", Self.jpeg), Self.f("IMG_0001.CR2", Self.raw), Self.f("IMG_0001.xmp", .sidecar),
            Self.f("IMG_0002.HEIC", Self.heic, id: "X"), Self.f("IMG_0002.MOV", .video, id: "X"),
            Self.f("IMG_0003.HEIC", Self.heic, id: "Y", at: t0), Self.f("IMG_0003.MOV", .video, id: "Z", at: t0),
            Self.f("IMG_0004.xmp", .sidecar), Self.f("IMG_0005.CR2.xmp", .sidecar), Self.f("IMG_0005.JPG", Self.jpeg),
            Self.f("IMG_0001.JPG.xmp", .sidecar),
        ]
        #expect(Self.render(ResourcePairing.pairFolder(files)) == [
            "IMG_0001.JPG+raw:IMG_0001.CR2+sidecar:IMG_0001.JPG.xmp+sidecar:IMG_0001.xmp{raw}",
            "IMG_0002.HEIC+pairedVideo:IMG_0002.MOV{live}",
            "IMG_0003.HEIC",
            "IMG_0003.MOV video",
            "IMG_0005.JPG",
        ])
        #expect(ResourcePairing.orphanSidecars(files) == [Array("IMG_0004.xmp".utf8), Array("IMG_0005.CR2.xmp".utf8)])
        #expect(ResourcePairing.pairFolder(files.reversed()) == ResourcePairing.pairFolder(files))
    }

    @Test("Kinds from formats")
    func kinds() {
        #expect(ResourcePairing.kind(mediaType: .image, format: "heic", isRaw: false) == .image(raw: false, preference: 0))
        #expect(ResourcePairing.kind(mediaType: .image, format: "jpeg", isRaw: false) == .image(raw: false, preference: 1))
        #expect(ResourcePairing.kind(mediaType: .image, format: "cr2", isRaw: true) == .image(raw: true, preference: 0))
        #expect(ResourcePairing.kind(mediaType: .video, format: "mov", isRaw: false) == .video)
        #expect(ResourcePairing.preference(format: "png") > ResourcePairing.preference(format: "jpeg"))
        #expect(ResourcePairing.isSidecarName(Array("a.XmP".utf8)))
        #expect(!ResourcePairing.isSidecarName(Array(".xmp".utf8)))
        #expect(!ResourcePairing.isSidecarName(Array("a.xmpp".utf8)))
    }
}
