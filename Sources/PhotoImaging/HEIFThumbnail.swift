internal import CHeif
import PhotoModel
import PhotoSystem

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
    /// a HEIF file, its primary image has no thumbnail of at most 4 MP, or `accept` refuses the
    /// file as opened (its `fstat`: the caller's file version). The file is opened once and
    /// read through that descriptor. A damaged thumbnail is `.corrupt`.
    public static func render(path: PathBytes, accept: (FileStat) -> Bool = { _ in true }) throws(ImageError) -> RenderedImage? {
        let fd: FileDescriptor
        do throws(SystemError) { fd = try FileDescriptor.open(path) } catch { throw FileBytes.unreadable(error) }
        defer { fd.close() }
        let st: FileStat
        do throws(SystemError) { st = try fd.stat() } catch { throw FileBytes.unreadable(error) }
        guard st.isRegularFile, accept(st) else { return nil }
        let reader = DescriptorReader(fd: fd, size: st.size)
        var head = [UInt8](repeating: 0, count: Int(min(st.size, 64)))
        guard head.withUnsafeMutableBytes({ reader.read(into: $0) }), isHEIF(head) else { return nil }
        reader.position = 0
        return try withExtendedLifetime(reader) { () throws(ImageError) -> RenderedImage? in
            let userdata = Unmanaged.passUnretained(reader).toOpaque()
            return try render { context throws(ImageError) in
                // libheif keeps the pointer and reads through it while decoding: the reader's own.
                try HEIFDecoder.check(heif_context_read_from_reader(context, reader.callbacks, userdata, nil), "HEIF container")
            }
        }
    }

    /// The thumbnail of a HEIF file held in memory (tests, fuzzing); as `render(path:)`.
    public static func render(bytes: [UInt8]) throws(ImageError) -> RenderedImage? {
        guard isHEIF(bytes) else { return nil }
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

    /// Whether the head of a file may be a HEIF file: libheif says yes or maybe (`mif1` and
    /// `msf1` main brands are a maybe; reading the container decides).
    static func isHEIF(_ head: [UInt8]) -> Bool {
        guard head.count >= 12 else { return false }
        return head.prefix(64).withUnsafeBufferPointer { heif_check_filetype($0.baseAddress, Int32($0.count)) } != heif_filetype_no
    }

    private static func render(reading read: (OpaquePointer) throws(ImageError) -> Void) throws(ImageError) -> RenderedImage? {
        try HEIFDecoder.start()
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

/// libheif's reader over a file descriptor (`pread` at a position of its own), so that the
/// thumbnail comes from the file that was opened and checked, and only the boxes and the
/// thumbnail's data are read.
private final class DescriptorReader {
    let fd: FileDescriptor
    let size: Int64
    var position: Int64 = 0
    /// The callbacks, at an address that lives as long as the reader (libheif keeps it).
    let callbacks: UnsafeMutablePointer<heif_reader>

    init(fd: FileDescriptor, size: Int64) {
        self.fd = fd
        self.size = size
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: Self.functions)
    }

    deinit {
        callbacks.deinitialize(count: 1)
        callbacks.deallocate()
    }

    /// Fills `buffer` from the position; false when the file ends first or a read fails.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            let n: Int
            do throws(SystemError) {
                n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: position + Int64(done))
            } catch {
                return false
            }
            if n <= 0 { return false }
            done += n
        }
        position += Int64(done)
        return true
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> DescriptorReader {
        Unmanaged<DescriptorReader>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static let functions = heif_reader(
        reader_api_version: 1,
        get_position: { userdata in from(userdata).position },
        read: { data, size, userdata in
            guard let data else { return size == 0 ? 0 : 1 }
            return from(userdata).read(into: UnsafeMutableRawBufferPointer(start: data, count: size)) ? 0 : 1
        },
        seek: { position, userdata in
            let reader = from(userdata)
            guard position >= 0, position <= reader.size else { return 1 }
            reader.position = position
            return 0
        },
        wait_for_file_size: { target, userdata in
            target <= from(userdata).size ? heif_reader_grow_status_size_reached : heif_reader_grow_status_size_beyond_eof
        })
}
