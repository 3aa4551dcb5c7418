internal import CHeif
import Foundation

/// A real HEIF file (HEVC, made with libheif's encoder, as a phone's camera app does): four
/// coloured quadrants (red, green / blue, white), optionally transparent outside a centred
/// box, optionally with a thumbnail image item, and optionally another major brand (`mif1`).
public struct HEIFFixture: Sendable, Hashable {
    public var width: Int
    public var height: Int
    /// Transparent outside the middle half (an RGBA image with an alpha plane).
    public var alpha: Bool
    /// The thumbnail's longer side, or nil for none.
    public var thumbnail: Int?
    /// Written over the major brand (bytes 8–11), e.g. "mif1".
    public var brand: String?
    /// An EXIF orientation (1–8) that libheif's encoder writes as the primary image's
    /// `irot`/`imir` properties: the pattern is stored as it is (`ispe` is `width × height`) and
    /// displayed turned by them.
    public var orientation: Int?
    /// An EXIF item whose IFD0 Orientation is this (it may disagree with `orientation`).
    public var exifOrientation: Int?

    public init(width: Int = 640, height: Int = 480, alpha: Bool = false, thumbnail: Int? = 320, brand: String? = nil,
                orientation: Int? = nil, exifOrientation: Int? = nil) {
        self.width = width
        self.height = height
        self.alpha = alpha
        self.thumbnail = thumbnail
        self.brand = brand
        self.orientation = orientation
        self.exifOrientation = exifOrientation
    }

    /// The colour of the pattern at (x, y): RGB, then alpha when `alpha`.
    public func pixel(x: Int, y: Int) -> [UInt8] {
        let rgb: [UInt8] = switch (x < width / 2, y < height / 2) {
        case (true, true): [220, 30, 30]
        case (false, true): [30, 200, 40]
        case (true, false): [30, 40, 210]
        case (false, false): [240, 240, 240]
        }
        guard alpha else { return rgb }
        let inside = x >= width / 4 && x < 3 * width / 4 && y >= height / 4 && y < 3 * height / 4
        return rgb + [inside ? 255 : 0]
    }

    public struct EncodingError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The file's bytes. Throws when this libheif has no HEVC encoder.
    public func bytes() throws -> [UInt8] {
        try Self.withContext { context in try encode(context) }
    }

    /// Runs `body` with a new libheif context. libheif is initialised for the whole call: a
    /// heif_deinit elsewhere (the last one) frees the plugins, which this call may be using.
    static func withContext<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        _ = heif_init(nil)
        defer { heif_deinit() }
        guard let context = heif_context_alloc() else { throw EncodingError(description: "heif_context_alloc failed") }
        defer { heif_context_free(context) }
        return try body(context)
    }

    static func check(_ error: heif_error, _ what: String) throws {
        guard error.code != heif_error_Ok else { return }
        throw EncodingError(description: "\(what): " + (error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"))
    }

    private func encode(_ context: OpaquePointer) throws -> [UInt8] {
        let check = Self.check
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder), "no HEVC encoder")
        guard let encoder else { throw EncodingError(description: "no HEVC encoder") }
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, 90), "quality")
        var image: OpaquePointer?
        let channels = alpha ? 4 : 3
        try check(heif_image_create(Int32(width), Int32(height), heif_colorspace_RGB,
                                    alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &image), "image")
        guard let image else { throw EncodingError(description: "heif_image_create gave nothing") }
        defer { heif_image_release(image) }
        try check(heif_image_add_plane(image, heif_channel_interleaved, Int32(width), Int32(height), 8), "plane")
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(image, heif_channel_interleaved, &stride) else {
            throw EncodingError(description: "no plane")
        }
        for y in 0..<height {
            for x in 0..<width {
                let p = pixel(x: x, y: y)
                for c in 0..<channels { plane[y * Int(stride) + x * channels + c] = p[c] }
            }
        }
        var handle: OpaquePointer?
        guard let options = heif_encoding_options_alloc() else { throw EncodingError(description: "heif_encoding_options_alloc failed") }
        defer { heif_encoding_options_free(options) }
        if let orientation {
            guard (1...8).contains(orientation) else { throw EncodingError(description: "orientation \(orientation) is not 1–8") }
            options.pointee.image_orientation = heif_orientation(rawValue: UInt32(orientation))
        }
        try check(heif_context_encode_image(context, image, encoder, options, &handle), "encode")
        defer { heif_image_handle_release(handle) }
        if let exifOrientation {
            let exif = Array("Exif".utf8) + [0, 0] + ExifFixture(orientation: exifOrientation).bytes()
            try check(heif_context_add_exif_metadata(context, handle, exif, Int32(exif.count)), "EXIF")
        }
        if let thumbnail {
            try check(heif_context_encode_thumbnail(context, image, handle, encoder, nil, Int32(thumbnail), nil), "thumbnail")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("heif-fixture-\(UUID().uuidString).heic")
        defer { try? FileManager.default.removeItem(at: file) }
        try check(heif_context_write_to_file(context, file.path), "write")
        var bytes = [UInt8](try Data(contentsOf: file))
        if let brand, bytes.count >= 12 { bytes.replaceSubrange(8..<12, with: Array(brand.utf8.prefix(4))) }
        if let orientation, orientation >= 5 { Self.transposeImageSizes(&bytes) }
        return bytes
    }

    /// libheif 1.15's encoder, asked for an orientation that swaps the axes (5–8), writes the
    /// displayed size into `ispe`, which holds the coded (stored) size (ISO/IEC 23008-12
    /// 6.5.3; iPhones and later libheif write it so). Each `ispe`'s width and height are
    /// swapped back, so the fixture is the file a camera writes.
    static func transposeImageSizes(_ bytes: inout [UInt8]) {
        let ispe = Array("ispe".utf8)
        var i = 4
        while i + 16 <= bytes.count {
            if Array(bytes[i..<(i + 4)]) == ispe, bytes[i - 4] == 0, bytes[i - 3] == 0, bytes[i - 2] == 0, bytes[i - 1] == 20 {
                // size (4), "ispe", version and flags (4), width (4), height (4)
                let w = Array(bytes[(i + 8)..<(i + 12)]), h = Array(bytes[(i + 12)..<(i + 16)])
                bytes.replaceSubrange((i + 8)..<(i + 12), with: h)
                bytes.replaceSubrange((i + 12)..<(i + 16), with: w)
                i += 16
            } else {
                i += 1
            }
        }
    }

    /// The primary image of a HEIF file as stored, decoded without its `irot`/`imir` (libheif's
    /// `ignore_transformations`): RGB rows, to compare with what the renderer shows once the
    /// orientation the metadata reader reports is applied.
    public static func storedImage(_ bytes: [UInt8]) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        try withContext { context in try decodeUntransformed(bytes, context) }
    }

    private static func decodeUntransformed(_ bytes: [UInt8], _ context: OpaquePointer) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        try bytes.withUnsafeBytes { data in
            try check(heif_context_read_from_memory(context, data.baseAddress, data.count, nil), "read")
        }
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &handle), "primary image")
        defer { heif_image_handle_release(handle) }
        guard let options = heif_decoding_options_alloc() else { throw EncodingError(description: "heif_decoding_options_alloc failed") }
        defer { heif_decoding_options_free(options) }
        options.pointee.ignore_transformations = 1
        var image: OpaquePointer?
        try check(heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, options), "decode")
        defer { heif_image_release(image) }
        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            throw EncodingError(description: "no plane")
        }
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for y in 0..<height { rgb += UnsafeBufferPointer(start: plane + y * Int(stride), count: width * 3) }
        return (width, height, rgb)
    }
}
