// Fuzz target: the date found in a file name (`IMG_20200102_030405.jpg`, `PXL_...`,
// `Screenshot 2020-01-02 at 03.04.05.png`); names are arbitrary bytes, not UTF-8.
import PhotoModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = FileNameDate.parse(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
