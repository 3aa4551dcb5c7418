import PhotoMetadata
import PhotoModel
import PhotoStore
import PhotoSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The live `FileReading`: opens the file, sniffs and parses it with `MetadataReader`, applies
/// the capture-date rules in the daemon's zone, and fingerprints the content.
public struct MediaFileReader: FileReading {
    /// 2: stray bytes between JPEG segments, images no decoder renders kept as assets, XMP
    /// orientation, IPTC-IIM dates, DateTime after XMP and IPTC dates, HEIF orientation as shown.
    /// 3: a video's frame rate, codecs, bit rate and capture rate (libavformat); HDR, depth
    /// maps and animation (`MediaTraits`).
    /// 4: BigTIFF files and BMPs with an OS/2 2.x header of any length are indexed.
    /// 5: ImageMagick's raw profiles in PNG text chunks (EXIF, XMP, IPTC-IIM); an XMP time
    /// without an offset takes an IPTC time's of the same second; Photoshop PSD/PSB are indexed.
    /// 6: Canon CRW, Minolta MRW and Sigma X3F are indexed; IIQ, 3FR, ERF, KDC, DCR, MOS, MEF
    /// and RWL are RAW (no longer TIFF); CR2, CR3 and IIQ take the camera's EXIF pixel size, RW2
    /// its borders' span.
    /// 7: MPEG transport streams (AVCHD `.mts`/`.m2ts` with their recording date and make, `.ts`)
    /// and program streams (`.mpg`, `.vob`, `.mod`) are indexed as videos.
    public static let rulesVersion = 7
    public var rulesVersion: Int { Self.rulesVersion }

    let reader = MetadataReader()
    let zone: any ZoneRules
    /// Metadata reads performed (what "re-reads no file" is measured by).
    public let reads: ReadCounter

    /// Called after the file is opened and measured, before it is read (tests change the file
    /// there: a truncation, a replacement or a deletion at the worst moment).
    let afterStat: (@Sendable (PathBytes) -> Void)?

    public init(zone: any ZoneRules, reads: ReadCounter = ReadCounter()) {
        self.init(zone: zone, reads: reads, afterStat: nil)
    }

    init(zone: any ZoneRules, reads: ReadCounter = ReadCounter(), afterStat: (@Sendable (PathBytes) -> Void)?) {
        self.zone = zone
        self.reads = reads
        self.afterStat = afterStat
    }

    public func read(_ c: Candidate) -> FileOutcome {
        reads.increment()
        // A file rewritten while it was read (truncated, saved again in place, replaced by a
        // rename) may have given bytes of two versions: read it again, a few times at most. A
        // file still changing after that keeps the identity measured before its last read, so
        // that the next comparison with the disk (its close, the next scan) reads it again.
        var attempt = 0
        while true {
            attempt += 1
            let (outcome, stable) = readOnce(c)
            if stable || attempt >= Self.maxAttempts { return outcome }
        }
    }

    /// Reads of a file that keeps changing under the reader, at most.
    static let maxAttempts = 3

    /// One read of the file; `stable` is false when it changed (or was replaced) meanwhile.
    private func readOnce(_ c: Candidate) -> (FileOutcome, stable: Bool) {
        let claims = MediaExtensions.claimsMedia(c.name)
        let path = c.path
        let fd: FileDescriptor
        do {
            // O_NOFOLLOW: a file swapped for a symbolic link since the walk is not followed out of
            // the library; O_NONBLOCK: one swapped for a FIFO cannot block a reader thread forever.
            fd = try FileDescriptor.open(path, flags: O_NOFOLLOW | O_NONBLOCK)
        } catch {
            switch error.errno {
            case ENOENT, ENOTDIR:
                // Deleted or renamed since the walk saw it: its removal (or its new name) is the
                // watcher's or the next scan's; nothing to record against a name that is gone.
                return (outcome(c, identity: c.identity, fingerprint: nil, .vanished), true)
            case EACCES, EPERM:
                return (outcome(c, identity: c.identity, fingerprint: nil,
                                .error(code: MetadataError.Code.permissionDenied.rawValue, message: "cannot open: \(error.message)")), true)
            default:
                return (outcome(c, identity: c.identity, fingerprint: nil,
                                .error(code: MetadataError.Code.unreadable.rawValue, message: "cannot open: \(error.message)")), true)
            }
        }
        defer { fd.close() }
        // Re-stat through the descriptor: the file may have changed since the directory walk,
        // and what is stored must describe the bytes actually read.
        let identity: FileIdentity
        do {
            let st = try fd.stat()
            guard st.isRegularFile else {
                return (outcome(c, identity: c.identity, fingerprint: nil, .ignored(reason: "not a regular file")), true)
            }
            identity = FileIdentity(fsid: c.identity.fsid, inode: st.inode, size: st.size, mtimeNanoseconds: st.mtimeNanoseconds)
        } catch {
            return (outcome(c, identity: c.identity, fingerprint: nil,
                            .error(code: MetadataError.Code.unreadable.rawValue, message: "cannot stat: \(error.message)")), true)
        }
        afterStat?(path)
        let result = parse(c, fd: fd, identity: identity, claims: claims)
        // Still the same file, unchanged, under the same name? Otherwise the bytes read may mix
        // versions (a truncation or a rewrite during the read), or describe a file replaced since.
        guard let after = try? fd.stat(), after.inode == identity.inode, after.size == identity.size,
              after.mtimeNanoseconds == identity.mtimeNanoseconds else {
            return (result, false)
        }
        do {
            let now = try FileStat.of(path, followLinks: false)
            return (result, now.inode == identity.inode)  // else replaced: read what the name holds now
        } catch {
            guard error.errno == ENOENT || error.errno == ENOTDIR else { return (result, false) }
            // Deleted (or renamed away) while it was read.
            return (outcome(c, identity: identity, fingerprint: nil, .vanished), true)
        }
    }

    /// Sniffs, parses and fingerprints an open file measured as `identity`.
    private func parse(_ c: Candidate, fd: FileDescriptor, identity: FileIdentity, claims: Bool) -> FileOutcome {
        if identity.size > ContentFingerprint.span { fd.adviseRandomAccess() }
        // The size is the one just measured; a file cut short since then reads short, and the
        // parsers treat a short read as the end of the file (never as bytes to allocate).
        var source = FileSource(descriptor: fd, size: identity.size)
        let fingerprint = Self.fingerprint(&source, size: identity.size)
        if ResourcePairing.isSidecarName(c.name) {
            do {
                let x = try reader.readSidecar(&source)
                return outcome(c, identity: identity, fingerprint: fingerprint,
                               .sidecar(SidecarFields(date: x.date, rating: x.rating, keywords: x.keywords, place: x.place)))
            } catch {
                return outcome(c, identity: identity, fingerprint: fingerprint,
                               .error(code: error.code.rawValue, message: "XMP sidecar: \(error.message)"))
            }
        }
        do {
            let meta = try reader.read(&source, fileName: c.name)
            var record = Self.record(meta, name: c.name, identity: identity, zone: zone)
            if record.mediaType == .video { try Self.addStreams(&record, fd: fd, size: identity.size) }
            return outcome(c, identity: identity, fingerprint: fingerprint, .media(record))
        } catch {
            switch error.code {
            // Audio in a video container (an `.mp4` with only sound) is a valid file, just not
            // a photo or video: remembered, not reported.
            case .notMedia where !claims || error.detectedKind == "audio", .emptyFile where !claims:
                return outcome(c, identity: identity, fingerprint: fingerprint, .ignored(reason: error.message))
            default:
                return outcome(c, identity: identity, fingerprint: fingerprint,
                               .error(code: error.code.rawValue, message: error.message))
            }
        }
    }

    private func outcome(_ c: Candidate, identity: FileIdentity, fingerprint: UInt64?, _ kind: FileOutcome.Kind) -> FileOutcome {
        FileOutcome(directory: c.directory, name: c.name, identity: identity, fingerprint: fingerprint, kind: kind,
                    isSoleNewMember: c.isSoleNewMember)
    }

    /// The content fingerprint of the file `name` below `directory`, read now; nil when it
    /// cannot be read.
    static func fingerprint(of name: [UInt8], in directory: FileDescriptor, size: Int64) -> UInt64? {
        guard let fd = try? FileDescriptor.open(name, in: directory, flags: O_RDONLY | O_CLOEXEC | O_NOFOLLOW) else { return nil }
        defer { fd.close() }
        var source = FileSource(descriptor: fd, size: size)
        return fingerprint(&source, size: size)
    }

    static func fingerprint(_ source: inout FileSource, size: Int64) -> UInt64? {
        guard let head = try? source.head() else { return nil }
        let tailRange = ContentFingerprint.tailRange(size: size)
        let tail = tailRange.isEmpty ? [] : (try? source.read(at: tailRange.lowerBound, count: Int(tailRange.count))) ?? []
        return ContentFingerprint.compute(size: size, head: head, tail: tail)
    }

    /// A video's streams as libavformat reads them from the headers (a fraction of a
    /// millisecond): frame rate, codecs, bit rate, and what the container parsers left out. A
    /// video libavformat cannot read keeps what the parsers found; one the disk fails to give
    /// (an I/O error) is `unreadable`, as any read of it that fails so: its fields are not written
    /// without the streams' (the file would not be read again).
    static func addStreams(_ record: inout MediaFields, fd: FileDescriptor, size: Int64) throws(MetadataError) {
        let info: VideoStreamInfo
        do {
            info = try VideoProbe.probe(descriptor: fd, size: size, timeoutMilliseconds: 5_000)
        } catch {
            if error.code == -EIO { throw MetadataError(.unreadable, "cannot read the file: \(error.message)") }
            return
        }
        record.frameRate = info.frameRate
        record.videoCodec = info.videoCodec.isEmpty || info.videoCodec == "none" ? nil : info.videoCodec
        record.audioCodec = info.audioCodec
        record.bitRate = info.bitRate
        record.captureFrameRate = info.captureFrameRate
        // PQ (SMPTE ST 2084) or HLG (ARIB STD-B67) at 10 bits or more: what a phone's HDR video is.
        if info.colorTransfer == 16 || info.colorTransfer == 18, info.bitsPerSample >= 10 { record.traits.insert(.hdr) }
        if record.duration == nil { record.duration = info.duration }
        if record.pixelWidth == nil || record.pixelHeight == nil, info.width > 0, info.height > 0 {
            record.pixelWidth = info.width
            record.pixelHeight = info.height
        }
    }

    /// The file's own record from what the reader found, with the capture-date rules applied
    /// in the daemon's zone.
    static func record(_ meta: MediaMetadata, name: [UInt8], identity: FileIdentity, zone: any ZoneRules) -> MediaFields {
        let date = CaptureDate.resolve(meta.dates, fileName: name, mtimeNanoseconds: identity.mtimeNanoseconds, zone: zone)
        let orientation = meta.orientation.flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
        return MediaFields(mediaType: meta.mediaType, format: meta.format.rawValue, isRaw: meta.format.isRaw,
                            captureDate: date, pixelWidth: meta.pixelWidth, pixelHeight: meta.pixelHeight,
                            orientation: orientation, latitude: meta.latitude, longitude: meta.longitude,
                            altitude: meta.altitude, make: meta.make, model: meta.model, lensModel: meta.lensModel,
                            duration: meta.duration, traits: meta.traits, burstIdentifier: meta.burstIdentifier,
                            rating: meta.rating, keywords: meta.keywords,
                            userComment: meta.userComment, contentIdentifier: meta.contentIdentifier, filePlace: meta.place)
    }
}

/// A thread-safe counter of metadata reads.
public final class ReadCounter: Sendable {
    private let count = Atomic<Int>(0)
    public init() {}
    public func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    public var value: Int { count.load(ordering: .relaxed) }
}
