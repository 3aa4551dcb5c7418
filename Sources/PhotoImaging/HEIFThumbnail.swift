internal import CHeif
import PhotoModel

/// The thumbnail image item a HEIF file (HEIC, AVIF) carries for its primary image — phones
/// write one of about 320 × 240 — decoded as the degraded image of a HEIF photo, whose EXIF
/// block holds no thumbnail. libheif reads the container's boxes and then only that item's
/// data (seeking past the primary image), and applies the item's own `irot`/`imir`, so the
/// result is upright as the full image is.
public enum HEIFThumbnail {
    /// Thumbnails claiming more pixels than this are not decoded (a thumbnail is small; a
    /// larger one is no quicker than the image).
    static let pixelLimit = 1 << 22

    /// The largest thumbnail of the file's primary image, decoded; `nil` when the file is not
    /// a HEIF file libheif can decode or its primary image has no thumbnail of at most 4 MP.
    /// A damaged thumbnail is `.corrupt`.
    public static func render(path: PathBytes) throws(ImageError) -> RenderedImage? {
        let head = try FileBytes.read(path, limit: .max, head: 64)
        guard isSupported(head) else { return nil }
        let name = path.bytes.map { CChar(bitPattern: $0) } + [0]
        return try render { context throws(ImageError) in
            try HEIFDecoder.check(heif_context_read_from_file(context, name, nil), "HEIF container")
        }
    }

    /// The thumbnail of a HEIF file held in memory (tests, fuzzing); as `render(path:)`.
    public static func render(bytes: [UInt8]) throws(ImageError) -> RenderedImage? {
        guard isSupported(bytes) else { return nil }
        let result = bytes.withUnsafeBytes { data in
            Result { () throws(ImageError) -> RenderedImage? in
                try render { context throws(ImageError) in
                    try HEIFDecoder.check(heif_context_read_from_memory_without_copy(context, data.baseAddress, data.count, nil),
                                          "HEIF container")
                }
            }
        }
        return try result.get()
    }

    /// Whether the head of a file is a HEIF file libheif decodes.
    static func isSupported(_ head: [UInt8]) -> Bool {
        guard head.count >= 12 else { return false }
        return head.prefix(64).withUnsafeBufferPointer { heif_check_filetype($0.baseAddress, Int32($0.count)) } == heif_filetype_yes_supported
    }

    private static func render(reading read: (OpaquePointer) throws(ImageError) -> Void) throws(ImageError) -> RenderedImage? {
        _ = heif_init(nil)
        defer { heif_deinit() }
        guard let context = heif_context_alloc() else { throw .corrupt("cannot initialise the HEIF decoder") }
        defer { heif_context_free(context) }
        heif_context_set_max_decoding_threads(context, 0)
        try read(context)
        var primary: OpaquePointer?
        try HEIFDecoder.check(heif_context_get_primary_image_handle(context, &primary), "HEIF primary image")
        guard let primary else { return nil }
        defer { heif_image_handle_release(primary) }
        let count = heif_image_handle_get_number_of_thumbnails(primary)
        guard count > 0, count <= 64 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        let listed = heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, count)
        var best: (handle: OpaquePointer, pixels: Int)?
        for id in ids.prefix(Int(max(0, listed))) {
            var thumbnail: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &thumbnail).code == heif_error_Ok, let thumbnail else { continue }
            let pixels = Int(heif_image_handle_get_width(thumbnail)) * Int(heif_image_handle_get_height(thumbnail))
            if pixels > 0, pixels <= pixelLimit, pixels > best?.pixels ?? 0 {
                if let previous = best { heif_image_handle_release(previous.handle) }
                best = (thumbnail, pixels)
            } else {
                heif_image_handle_release(thumbnail)
            }
        }
        guard let best else { return nil }
        defer { heif_image_handle_release(best.handle) }
        // At its own size, whichever way it is turned (`fit` never upscales).
        let side = Int(max(heif_image_handle_get_width(best.handle), heif_image_handle_get_height(best.handle)))
        return try HEIFDecoder.decode(best.handle, Request(target: PixelSize(width: side, height: side), mode: .fit,
                                                           pixelLimit: pixelLimit))
    }
}
