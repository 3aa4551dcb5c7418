// Fuzz target: the JSON parser. A parsed document must serialize to text that parses back
// to the same value (the daemon echoes ids and writes what it read).
import PhotoWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let value = try? JSONValue.parse(bytes) else { return 0 }
    let text = value.serialized()
    guard let again = try? JSONValue.parse(text) else {
        fatalError("serialized JSON does not parse: \(String(decoding: text, as: UTF8.self))")
    }
    guard again.serialized() == text else {
        fatalError("JSON does not round-trip: \(String(decoding: text, as: UTF8.self)) vs \(again)")
    }
    return 0
}
