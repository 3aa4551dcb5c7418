/// Finds a member of a JSON object in its bytes without decoding it, so that a value can be
/// passed on exactly as photod sent it (the bridge publishes a `changes` notification's `params`
/// byte for byte). Only the top level is searched; nested values are skipped whole, strings
/// with their escapes.
public enum RawJSON {
    /// The bytes of the value of `key` in the object `text`, or nil (not an object, no such
    /// member, or malformed).
    public static func member(_ key: String, in text: [UInt8]) -> ArraySlice<UInt8>? {
        var i = skipSpace(text, 0)
        guard i < text.count, text[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        let wanted = Array(key.utf8)
        while true {
            i = skipSpace(text, i)
            guard i < text.count else { return nil }
            if text[i] == UInt8(ascii: "}") { return nil }
            if text[i] == UInt8(ascii: ",") { i += 1; continue }
            guard text[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(text, i) else { return nil }
            let name = text[(i + 1)..<(keyEnd - 1)]
            i = skipSpace(text, keyEnd)
            guard i < text.count, text[i] == UInt8(ascii: ":") else { return nil }
            i = skipSpace(text, i + 1)
            guard let valueEnd = valueEnd(text, i) else { return nil }
            if name.elementsEqual(wanted) { return text[i..<valueEnd] }
            i = valueEnd
        }
    }

    static func skipSpace(_ t: [UInt8], _ start: Int) -> Int {
        var i = start
        while i < t.count, t[i] == 0x20 || t[i] == 0x09 || t[i] == 0x0A || t[i] == 0x0D { i += 1 }
        return i
    }

    /// The index after the closing quote of the string starting at `start`.
    static func stringEnd(_ t: [UInt8], _ start: Int) -> Int? {
        var i = start + 1
        while i < t.count {
            switch t[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i + 1
            default: i += 1
            }
        }
        return nil
    }

    /// The index after the value starting at `start`.
    static func valueEnd(_ t: [UInt8], _ start: Int) -> Int? {
        guard start < t.count else { return nil }
        switch t[start] {
        case UInt8(ascii: "\""): return stringEnd(t, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0, i = start
            while i < t.count {
                switch t[i] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(t, i) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            var i = start
            while i < t.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(t[i]) { i += 1 }
            return i > start ? i : nil
        }
    }
}
