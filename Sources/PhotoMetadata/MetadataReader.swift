import PhotoModel

/// Reads what photod needs from one media file: the format (sniffed from the content, never
/// from the extension alone), pixel size, orientation, capture-date candidates, GPS, camera,
/// duration and a few extras. It reads headers, not files: every read is bounded, large
/// payloads are skipped by offset, and a damaged file yields what is valid plus warnings.
///
/// The reader holds no state and no locks; one value can serve any number of threads.
public struct MetadataReader: Sendable {
    /// A reader.
    public init() {}

    /// Sniffs the content (magic bytes, never the extension alone), parses the container and
    /// its EXIF/XMP, and returns what is valid.
    ///
    /// - Throws: `.emptyFile` for a zero-byte file; `.notMedia` (with `detectedKind`) for
    ///   text, PDF, SVG, audio, archives and unknown binaries; `.unsupported` for media formats
    ///   photod does not index; `.unreadable` for I/O errors; `.truncated` or `.corrupt` for a
    ///   media file too damaged to yield anything.
    public func read(_ source: inout some ByteSource, fileName: [UInt8]) throws(MetadataError) -> MediaMetadata {
        try Self.read(&source, fileName: fileName)
    }

    private static func read<S: ByteSource>(_ source: inout S, fileName: [UInt8]) throws(MetadataError) -> MediaMetadata {
        guard source.size > 0 else { throw MetadataError(.emptyFile, "the file is empty (0 bytes)") }
        var input = try Input(source: source)
        // Hand the source back with its state (read counters, cached head), whatever happens.
        defer { if let back = input.source as? S { source = back } }
        return try parse(&input, fileName: fileName)
    }

    static func parse(_ input: inout Input, fileName: [UInt8]) throws(MetadataError) -> MediaMetadata {
        let container: Container
        switch Sniffer.sniff(input.headView) {
        case .container(let c): container = c
        case .notMedia(let kind, let message): throw MetadataError(.notMedia, message, detectedKind: kind)
        case .unsupported(let what): throw MetadataError(.unsupported, "content is \(what), which photod does not index")
        }
        var meta = MediaMetadata(format: initialFormat(container))
        var exif: ExifFields?
        var xmp: XMPFields?
        let head = input.headView
        switch container {
        case .jpeg: try JPEG.parse(&input, &meta, exif: &exif, xmp: &xmp)
        case .tiff: try TIFFFile.parse(&input, &meta, exif: &exif, xmp: &xmp, fileName: fileName)
        case .png: try PNG.parse(&input, &meta, exif: &exif, xmp: &xmp, mng: false)
        case .mng: try PNG.parse(&input, &meta, exif: &exif, xmp: &xmp, mng: true)
        case .gif:
            Stills.gif(head, &meta)
            if try Stills.gifFrames(&input, atLeast: 2) >= 2 { meta.traits.insert(.animated) }
        case .bmp: Stills.bmp(head, &meta)
        case .ico: Stills.ico(head, &meta)
        case .bpg: Stills.bpg(head, &meta)
        case .webp: try RIFF.webp(&input, &meta, exif: &exif, xmp: &xmp)
        case .avi: try RIFF.avi(&input, &meta)
        case .bmff: try BMFF.parse(&input, &meta, exif: &exif, xmp: &xmp)
        case .jp2: try BoxStills.jp2(&input, &meta)
        case .j2kCodestream: Stills.j2kCodestream(head, &meta)
        case .jxlCodestream: Stills.jxlCodestream(head, &meta)
        case .jxlContainer: try BoxStills.jxl(&input, &meta, exif: &exif, xmp: &xmp)
        case .ebml: try Matroska.parse(&input, &meta)
        case .flv: try FLV.parse(&input, &meta)
        case .mpegTS: try MPEGTS.parse(&input, &meta)
        case .mpegPS: try MPEGPS.parse(&input, &meta)
        case .asf: try ASF.parse(&input, &meta)
        case .raf: try RAF.parse(&input, &meta, exif: &exif, xmp: &xmp)
        case .psd: try PSD.parse(&input, &meta, exif: &exif, xmp: &xmp)
        case .crw: try OtherRAW.crw(&input, &meta, exif: &exif)
        case .mrw: try OtherRAW.mrw(&input, &meta, exif: &exif)
        case .x3f: try OtherRAW.x3f(&input, &meta, exif: &exif)
        }
        if let exif { apply(exif, to: &meta) }
        // XMP's location before IPTC-IIM's: tools that write both keep XMP current (MWG).
        meta.place = xmp?.place ?? meta.iptcPlace
        if let xmp {
            meta.dates.xmp = xmp.date
            meta.rating = xmp.rating
            meta.keywords = xmp.keywords
            // Editors that write no EXIF (PNG, WebP, some JPEGs) put the orientation in XMP.
            if meta.orientation == nil, meta.mediaType == .image, !meta.format.isHEIF { meta.orientation = xmp.orientation }
            if meta.mediaType == .image {
                if xmp.hasGainMap { meta.traits.insert(.hdr) }
                if xmp.hasDepthMap { meta.traits.insert(.depth) }
            }
        }
        // The rule between an asset and an error row: a file recognisably of a media format
        // (its signature) with any usable structure — a frame or header size, EXIF, XMP, a date,
        // a duration — is an asset with what is valid in it, whether or not a decoder here can
        // render its pixels (a JPEG whose height waits for a DNL segment, a 12-bit or lossless
        // JPEG, an animated WebP, a HEIF of a codec libheif lacks: their image requests fail
        // with `undecodable`). Only a file that gave nothing at all is an error, not an asset
        // without any metadata: say whether it ends early or is broken.
        if meta.pixelWidth == nil, exif == nil, xmp == nil, meta.duration == nil, meta.dates == DateCandidates(),
           meta.latitude == nil {
            let what = meta.format.rawValue.uppercased()
            let detail = meta.warnings.last.map { ": " + $0 } ?? ""
            if input.hitEnd { throw MetadataError(.truncated, "\(what) file is cut short, nothing readable in it\(detail)") }
            throw MetadataError(.corrupt, "\(what) file holds no readable image header\(detail)")
        }
        return meta
    }

    static func initialFormat(_ c: Container) -> MediaFormat {
        switch c {
        case .jpeg: return .jpeg
        case .tiff: return .tiff
        case .png: return .png
        case .mng: return .mng
        case .gif: return .gif
        case .bmp: return .bmp
        case .ico: return .ico
        case .bpg: return .bpg
        case .webp: return .webp
        case .avi: return .avi
        case .bmff: return .mp4
        case .jp2, .j2kCodestream: return .jpeg2000
        case .jxlCodestream, .jxlContainer: return .jpegXL
        case .ebml: return .matroska
        case .flv: return .flv
        case .mpegTS: return .m2ts
        case .mpegPS: return .mpeg
        case .asf: return .asf
        case .raf: return .raf
        case .psd: return .psd
        case .crw: return .crw
        case .mrw: return .mrw
        case .x3f: return .x3f
        }
    }

    static func apply(_ e: ExifFields, to meta: inout MediaMetadata) {
        meta.make = e.make ?? meta.make
        meta.model = e.model ?? meta.model
        meta.lensModel = e.lensModel ?? meta.lensModel
        meta.software = e.software ?? meta.software
        meta.userComment = e.userComment
        if let o = e.orientation, !meta.format.isHEIF { meta.orientation = o }
        meta.dates.exifOriginal = e.original
        meta.dates.exifDigitized = e.digitized
        meta.dates.exifModified = e.modified
        meta.dates.gpsUTC = e.gpsUTC
        if let lat = e.latitude, let lon = e.longitude {
            meta.latitude = lat
            meta.longitude = lon
        }
        if let alt = e.altitude { meta.altitude = alt }
        if let id = e.contentIdentifier { meta.contentIdentifier = id }
        if e.appleHDR { meta.traits.insert(.hdr) }
        if let b = e.burstIdentifier { meta.burstIdentifier = b }
    }
}
