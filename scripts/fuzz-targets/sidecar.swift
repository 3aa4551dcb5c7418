// Fuzz target: an XMP sidecar (`photo.jpg.xmp`), read as the pipeline reads it.
import PhotoMetadata

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var source = MemorySource(Array(UnsafeBufferPointer(start: data, count: size)))
    _ = try? MetadataReader().readSidecar(&source)
    return 0
}
