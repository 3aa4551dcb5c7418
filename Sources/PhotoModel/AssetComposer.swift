/// Turns the files of one group (one directory, one base name: `IMG_1.HEIC`, `IMG_1.MOV`,
/// `IMG_1.xmp`) into the assets they make: pairing, which asset id each keeps, the asset's
/// fields (date choice, a sidecar's rating and keywords), its subtypes. Pure: the writer reads
/// the group's rows, asks the composer, and carries out the plan.
public enum AssetComposer {
    /// A file of a group as its index row says.
    public struct File: Sendable, Hashable {
        /// What the row holds.
        public enum Content: Sendable, Hashable {
            case media(MediaFields)
            case sidecar(SidecarFields)
            /// A file that is not media (ignored, or an error: `isError`).
            case other(isError: Bool)
        }

        /// The row's key (opaque to the composer).
        public var pk: Int64
        public var name: [UInt8]
        public var content: Content
        /// The asset the row belongs to now, and as what.
        public var assetPK: Int64?
        public var role: Resource.Role?
        public var size: Int64

        public init(pk: Int64, name: [UInt8], content: Content, assetPK: Int64? = nil, role: Resource.Role? = nil,
                    size: Int64) {
            self.pk = pk
            self.name = name
            self.content = content
            self.assetPK = assetPK
            self.role = role
            self.size = size
        }

        /// What a media file's row holds (nil for a sidecar, an ignored or damaged file).
        public var media: MediaFields? { if case .media(let m) = content { return m }; return nil }
        var isError: Bool { if case .other(true) = content { return true }; return false }
    }

    /// One asset the group makes.
    public struct Composition: Sendable, Hashable {
        /// The asset whose id it keeps (nil: a new asset).
        public var existing: Int64?
        /// Index (in the group) of the primary file.
        public var primary: Int
        /// The asset's fields and subtypes.
        public var media: MediaFields
        public var subtypes: Set<AssetSubtype>
        /// Files (indexes in the group) and their roles, the primary first.
        public var members: [Member]
        /// Bytes of the primary file.
        public var fileSize: Int64

        public init(existing: Int64?, primary: Int, media: MediaFields, subtypes: Set<AssetSubtype>, members: [Member],
                    fileSize: Int64) {
            self.existing = existing
            self.primary = primary
            self.media = media
            self.subtypes = subtypes
            self.members = members
            self.fileSize = fileSize
        }
    }

    /// A file of a composition.
    public struct Member: Sendable, Hashable {
        public var file: Int
        public var role: Resource.Role

        public init(file: Int, role: Resource.Role) {
            self.file = file
            self.role = role
        }
    }

    /// What becomes of an asset of the group that no composition kept.
    public enum Leftover: Sendable, Hashable {
        /// One of its files is now an error (damaged): it goes to Recently Deleted.
        case trash(Int64)
        /// Its files went to another asset (a RAW found its JPEG): its user state joins that
        /// composition's asset (index in `compositions`) and it goes.
        case merge(Int64, into: Int)
        /// It goes to Recently Deleted unless a file elsewhere still holds it.
        case trashIfOrphan(Int64)
    }

    /// What the writer does with a group.
    public struct Plan: Sendable, Hashable {
        public var compositions: [Composition] = []
        /// Files (indexes) that lose their link to an asset: they stopped being media.
        public var unlinked: [Int] = []
        public var leftovers: [Leftover] = []
    }

    /// The plan for one group. `claimed`: assets other groups of the job composed already (a
    /// group must not take them). An asset keeps its id when its primary file, or else any of
    /// its files, still belongs to it.
    public static func plan(_ files: [File], claimed: Set<Int64>) -> Plan {
        var pairing: [PairingFile] = []
        for file in files {
            switch file.content {
            case .media(let m):
                pairing.append(PairingFile(name: file.name,
                                           kind: ResourcePairing.kind(mediaType: m.mediaType, format: m.format, isRaw: m.isRaw),
                                           contentIdentifier: m.contentIdentifier,
                                           captureInstantMilliseconds: m.captureInstantMilliseconds))
            case .sidecar:
                pairing.append(PairingFile(name: file.name, kind: .sidecar))
            case .other:
                continue
            }
        }
        var index: [[UInt8]: Int] = [:]
        for (i, file) in files.enumerated() where index[file.name] == nil { index[file.name] = i }
        var plan = Plan()
        var taken = claimed
        var kept = Set<Int64>()
        var linked = Set<Int>()
        var formerOwners: [Int64: Int] = [:]  // an asset whose files went to another composition
        for paired in ResourcePairing.pair(pairing) {
            guard let p = index[paired.primary], let primaryMedia = files[p].media else { continue }
            let members = paired.members.compactMap { m in index[m.name].map { Member(file: $0, role: m.role) } }
            let candidates = [files[p].assetPK] + members.map { files[$0.file].assetPK }
            let existing = candidates.compactMap { $0 }.first { !taken.contains($0) }
            let sidecar: SidecarFields? = members.lazy.compactMap { m -> SidecarFields? in
                guard m.role == .sidecar, case .sidecar(let s) = files[m.file].content else { return nil }
                return s
            }.first
            let pairedVideo = members.contains { $0.role == .pairedVideo }
            let composition = Composition(
                existing: existing, primary: p, media: assetFields(primary: primaryMedia, sidecar: sidecar),
                subtypes: paired.subtypes.union(subtypes(of: primaryMedia, name: files[p].name, hasPairedVideo: pairedVideo)),
                members: members, fileSize: files[p].size)
            if let existing {
                taken.insert(existing)
                kept.insert(existing)
            }
            for m in members {
                linked.insert(m.file)
                if let former = files[m.file].assetPK, former != existing { formerOwners[former] = plan.compositions.count }
            }
            plan.compositions.append(composition)
        }
        // A file that stopped being media (a truncated copy, garbage) keeps its link unless it
        // is an error, so that its asset, now in Recently Deleted, comes back with its id when
        // the file is whole again.
        for (i, file) in files.enumerated() where !linked.contains(i) && file.assetPK != nil && !file.isError {
            plan.unlinked.append(i)
        }
        var seen = Set<Int64>()
        for file in files {
            guard let pk = file.assetPK, !kept.contains(pk), seen.insert(pk).inserted else { continue }
            if files.contains(where: { $0.assetPK == pk && $0.isError }) {
                plan.leftovers.append(.trash(pk))
            } else if let winner = formerOwners[pk] {
                plan.leftovers.append(.merge(pk, into: winner))
            } else {
                plan.leftovers.append(.trashIfOrphan(pk))
            }
        }
        plan.leftovers.sort { $0.pk < $1.pk }
        return plan
    }

    /// An asset's fields from its primary file's and its sidecar's. A sidecar's date is an XMP
    /// capture date: it counts unless the file itself has a DateTimeOriginal or
    /// DateTimeDigitized, which come first (it beats the file's embedded XMP, IPTC and DateTime
    /// dates). Its rating, keywords and location, when it has them, override the embedded ones.
    public static func assetFields(primary: MediaFields, sidecar: SidecarFields?) -> MediaFields {
        var fields = primary
        guard let sidecar else { return fields }
        if let date = sidecar.date, !primary.captureDate.source.outranksXMP {
            fields.captureDate = CaptureDate(local: date.local, offset: date.offset, source: .xmp)
        }
        if let rating = sidecar.rating { fields.rating = rating }
        if !sidecar.keywords.isEmpty { fields.keywords = sidecar.keywords }
        if let place = sidecar.place { fields.filePlace = place }
        return fields
    }

    /// The subtypes an asset's primary file gives it (pairing adds Live Photos' and RAW+JPEG's).
    public static func subtypes(of primary: MediaFields, name: [UInt8], hasPairedVideo: Bool) -> Set<AssetSubtype> {
        (primary.isRaw ? Set([AssetSubtype.raw]) : []).union(SubtypeRules.subtypes(
            SubtypeInputs(media: primary, fileName: name, hasPairedVideo: hasPairedVideo)))
    }
}

extension AssetComposer.Leftover {
    /// The asset it is about.
    public var pk: Int64 {
        switch self {
        case .trash(let pk), .merge(let pk, _), .trashIfOrphan(let pk): return pk
        }
    }
}

extension DateSource {
    /// Whether the rules rank this source above an XMP date (a sidecar's does not override it).
    public var outranksXMP: Bool { self == .exifOriginal || self == .exifDigitized }
}
