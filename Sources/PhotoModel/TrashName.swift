/// The hidden name a file takes in its own directory while its asset is in Recently Deleted
/// (`assets.trash`), in the manner of Android's MediaStore (`.trashed-<expiry>-<name>`) but with
/// photod's own prefix, `.photod-trashed-<expiry>-<name>` (the expiry in Unix seconds): a phone's
/// folder synced into a library may hold MediaStore's trash, which photod must neither adopt nor
/// delete. A dot name is not part of the library (the walk skips it), and the name alone says
/// what the file was called and until when it is kept, so that the trash outlives a lost
/// database.
public enum TrashName {
    static let prefix = Array(".photod-trashed-".utf8)
    /// The longest name a file system takes (`NAME_MAX`).
    static let maxLength = 255

    /// The trashed name of `name`; nil when it would be longer than a file name may be.
    public static func make(_ name: [UInt8], expiresAt seconds: Int64) -> [UInt8]? {
        let made = prefix + Array(String(max(0, seconds)).utf8) + [UInt8(ascii: "-")] + name
        return made.count <= maxLength ? made : nil
    }

    /// The original name and the expiry of a trashed name; nil for any other name.
    public static func parse(_ name: [UInt8]) -> (original: [UInt8], expiresAt: Int64)? {
        guard name.starts(with: prefix) else { return nil }
        let rest = name[prefix.count...]
        guard let dash = rest.firstIndex(of: UInt8(ascii: "-")), dash > rest.startIndex, dash - rest.startIndex <= 18,
              rest[..<dash].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let seconds = Int64(String(decoding: rest[..<dash], as: UTF8.self)) else { return nil }
        let original = Array(rest[(dash + 1)...])
        guard !original.isEmpty, original != [UInt8(ascii: ".")], original != Array("..".utf8) else { return nil }
        return (original, seconds)
    }

    /// The name a restored file takes when its own is taken: ` (n)` after its base name, so that
    /// the files of one asset (`IMG_1.CR2`, `IMG_1.JPG`, `IMG_1.JPG.xmp`) keep sharing one
    /// (`IMG_1 (2).CR2`, …) and stay paired. `baseLength` is the length of the base name
    /// (`ResourcePairing.groupKey`).
    public static func suffixed(_ name: [UInt8], baseLength: Int, _ n: Int) -> [UInt8] {
        let cut = min(max(0, baseLength), name.count)
        return Array(name[..<cut]) + Array(" (\(n))".utf8) + Array(name[cut...])
    }
}
