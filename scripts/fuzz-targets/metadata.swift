// Fuzz target: the metadata reader on a whole file held in memory (sniffer, JPEG segments with
// stray bytes and the DNL search, IPTC-IIM in APP13, TIFF IFDs and the EXIF locator and decoding,
// PNG chunks with their text chunks and ImageMagick's raw profiles (zlib), WebP/AVI RIFF, ISO BMFF boxes and HEIF irot/imir, Matroska, FLV/ASF, RAF, XMP). Any result or thrown MetadataError is fine; a trap, a
// sanitizer report, a hang or a huge allocation is a bug.
import PhotoMetadata

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var source = MemorySource(Array(UnsafeBufferPointer(start: data, count: size)))
    _ = try? MetadataReader().read(&source, fileName: Array("IMG_20200102_030405.jpg".utf8))
    return 0
}
