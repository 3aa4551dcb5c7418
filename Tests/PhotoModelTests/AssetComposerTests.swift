import PhotoModel
import Testing

@Suite("Asset composer: files of a group to assets")
struct AssetComposerTests {
    static func date(_ iso: String, _ source: DateSource) -> CaptureDate {
        CaptureDate(local: LocalDateTime(iso: iso)!, offset: UTCOffset(seconds: 3600), source: source)
    }

    static func media(_ format: String = "jpeg", raw: Bool = false, date: CaptureDate = date("2021-06-01T10:00:00", .exifOriginal),
                      rating: Int? = nil, keywords: [String] = []) -> MediaFields {
        MediaFields(mediaType: .image, format: format, isRaw: raw, captureDate: date, pixelWidth: 4000, pixelHeight: 3000,
                    make: "Canon", rating: rating, keywords: keywords)
    }

    static func file(_ pk: Int64, _ name: String, _ content: AssetComposer.File.Content, asset: Int64? = nil,
                     role: Resource.Role? = nil) -> AssetComposer.File {
        AssetComposer.File(pk: pk, name: Array(name.utf8), content: content, assetPK: asset, role: role, size: 100 + pk)
    }

    @Test func aLoneFileIsANewAssetWithItsOwnFields() {
        let plan = AssetComposer.plan([Self.file(1, "IMG_1.JPG", .media(Self.media()))], claimed: [])
        #expect(plan.compositions.count == 1)
        let c = plan.compositions[0]
        #expect(c.existing == nil)
        #expect(c.media == Self.media())
        #expect(c.members == [AssetComposer.Member(file: 0, role: .primary)])
        #expect(c.fileSize == 101)
        #expect(plan.leftovers.isEmpty && plan.unlinked.isEmpty)
    }

    @Test("A sidecar's date counts only when the file has no EXIF capture date", arguments: [
        (DateSource.exifOriginal, DateSource.exifOriginal),
        (.exifDigitized, .exifDigitized),
        (.iptc, .xmp),
        (.exifModified, .xmp),
        (.fileName, .xmp),
        (.fileModified, .xmp),
    ])
    func sidecarDate(fileSource: DateSource, chosen: DateSource) {
        let sidecar = SidecarFields(date: Timestamp(local: LocalDateTime(iso: "1999-12-31T23:59:00")!), rating: nil, keywords: [])
        let fields = AssetComposer.assetFields(primary: Self.media(date: Self.date("2021-06-01T10:00:00", fileSource)),
                                               sidecar: sidecar)
        #expect(fields.captureDate.source == chosen)
        #expect((fields.captureDate.local.description == "1999-12-31T23:59:00") == (chosen == .xmp))
    }

    @Test func sidecarRatingAndKeywordsOverrideTheFilesWhenPresent() {
        let primary = Self.media(rating: 2, keywords: ["embedded"])
        let both = AssetComposer.assetFields(primary: primary, sidecar: SidecarFields(date: nil, rating: 5, keywords: ["xmp"]))
        #expect(both.rating == 5 && both.keywords == ["xmp"])
        let none = AssetComposer.assetFields(primary: primary, sidecar: SidecarFields(date: nil, rating: nil, keywords: []))
        #expect(none.rating == 2 && none.keywords == ["embedded"])
        #expect(none.captureDate == primary.captureDate)
    }

    @Test func theSidecarJoinsTheAssetOfItsBaseName() {
        let files = [Self.file(1, "IMG_1.JPG", .media(Self.media())),
                     Self.file(2, "IMG_1.xmp", .sidecar(SidecarFields(date: nil, rating: 3, keywords: ["k"])))]
        let plan = AssetComposer.plan(files, claimed: [])
        #expect(plan.compositions.count == 1)
        #expect(plan.compositions[0].members.map(\.role) == [.primary, .sidecar])
        #expect(plan.compositions[0].media.rating == 3)
    }

    @Test func anAssetKeepsItsIdUnlessAnotherGroupClaimedIt() {
        let files = [Self.file(1, "IMG_1.JPG", .media(Self.media()), asset: 7, role: .primary)]
        #expect(AssetComposer.plan(files, claimed: []).compositions.first?.existing == 7)
        let taken = AssetComposer.plan(files, claimed: [7])
        #expect(taken.compositions.first?.existing == nil)
        // Its file went to the new asset: 7 keeps the other group's files (the writer deletes it
        // only if none are left) and shares its user state with the new one.
        #expect(taken.leftovers == [.merge(7, into: 0)])
    }

    @Test func aRawThatFindsItsJPEGMergesIntoOneAsset() {
        // The JPEG arrived with an asset of its own (2); the RAW had asset 1 alone.
        let files = [Self.file(1, "IMG_1.CR2", .media(Self.media("cr2", raw: true)), asset: 1, role: .primary),
                     Self.file(2, "IMG_1.JPG", .media(Self.media()), asset: 2, role: .primary)]
        let plan = AssetComposer.plan(files, claimed: [])
        #expect(plan.compositions.count == 1)
        let c = plan.compositions[0]
        #expect(Set(c.members.map(\.file)) == [0, 1])
        let kept = c.existing!
        let other: Int64 = kept == 1 ? 2 : 1
        #expect(plan.leftovers == [.merge(other, into: 0)])
    }

    @Test func aFileThatStopsBeingMediaLeavesItsAsset() {
        // Damaged: its asset goes to Recently Deleted (the link stays, for when it is whole again).
        let damaged = AssetComposer.plan([Self.file(1, "IMG_1.JPG", .other(isError: true), asset: 4, role: .primary)],
                                         claimed: [])
        #expect(damaged.compositions.isEmpty && damaged.unlinked.isEmpty)
        #expect(damaged.leftovers == [.trash(4)])
        // Not media any more (ignored): unlinked; its asset goes unless a file elsewhere holds it.
        let ignored = AssetComposer.plan([Self.file(1, "IMG_1.JPG", .other(isError: false), asset: 4, role: .primary)],
                                         claimed: [])
        #expect(ignored.unlinked == [0])
        #expect(ignored.leftovers == [.trashIfOrphan(4)])
    }

    @Test func subtypesComeFromThePrimaryAndPairing() {
        var selfie = Self.media()
        selfie.lensModel = "iPhone 12 front camera 2.71mm f/2.2"
        #expect(AssetComposer.subtypes(of: selfie, name: Array("IMG_1.JPG".utf8), hasPairedVideo: false) == [.selfie])
        #expect(AssetComposer.subtypes(of: Self.media("dng", raw: true), name: Array("IMG_1.DNG".utf8),
                                       hasPairedVideo: false).contains(.raw))
        #expect(AssetComposer.subtypes(of: Self.media("heic"), name: Array("IMG_1.HEIC".utf8), hasPairedVideo: true)
                == [.live])
    }
}
