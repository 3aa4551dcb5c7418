// Fuzz target: the predicate language and sort specifications clients send
// (`assets.fetch` with `predicate` and `sort`).
import PhotoModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? AssetPredicate.parse(text)
    _ = try? AssetSort.parse(text)
    return 0
}
