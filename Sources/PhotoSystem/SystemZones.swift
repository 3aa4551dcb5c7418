import Glibc
import PhotoModel

/// Time zones from the system's database (Debian's tzdata, `/usr/share/zoneinfo`, or `$TZDIR`),
/// read as glibc reads them: by IANA name, and the system's own zone from `$TZ` or
/// `/etc/localtime`. What Debian updates is what photod applies (no copy of the rules of its own).
public enum SystemZones {
    /// The database's directory.
    static var directory: String {
        if let dir = getenv("TZDIR").map({ String(cString: $0) }), dir.hasPrefix("/") { return dir }
        return "/usr/share/zoneinfo"
    }

    /// The zone an IANA name (`Europe/Berlin`) names; nil for a name the database lacks or one
    /// that is not a plain relative name (no `..`, nothing but letters, digits, `/`, `_`, `-`, `+`).
    public static func zone(named name: String) -> TZifZone? {
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
                || c == UInt8(ascii: "/") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
        }
        guard allowed, !name.isEmpty, !name.hasPrefix("/"), !name.split(separator: "/").contains("..") else { return nil }
        return zone(file: directory + "/" + name, identifier: name)
    }

    /// The system's zone: `$TZ` (a name, `:name`, an absolute file or a POSIX rule; empty: UTC),
    /// else `/etc/localtime` (its name from the link into the database), else UTC.
    public static func current() -> TZifZone {
        if let tz = getenv("TZ").map({ String(cString: $0) }) {
            // Set but empty is UTC, as glibc reads it.
            if tz.isEmpty { return TZifZone(identifier: "UTC", posix: "UTC0")! }
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if name.hasPrefix("/"), let zone = zone(file: name, identifier: identifier(ofLink: name) ?? name) { return zone }
            if let zone = zone(named: name) { return zone }
            if let zone = TZifZone(identifier: name, posix: name) { return zone }
        }
        if let zone = zone(file: "/etc/localtime", identifier: identifier(ofLink: "/etc/localtime") ?? "localtime") { return zone }
        return TZifZone(identifier: "UTC", posix: "UTC0")!
    }

    static func zone(file: String, identifier: String) -> TZifZone? {
        guard let bytes = try? FileDescriptor.readAll(PathBytes(file), limit: 1 << 20) else { return nil }
        return TZifZone(identifier: identifier, tzif: bytes)
    }

    /// The IANA name a file is a link to (`/etc/localtime` -> `/usr/share/zoneinfo/Europe/Berlin`).
    public static func identifier(ofLink file: String) -> String? {
        guard let target = DefaultPaths.readLink(PathBytes(file)) else { return nil }
        let marker = Array("zoneinfo/".utf8)
        guard let at = (0...max(0, target.count - marker.count)).last(where: { target[$0...].starts(with: marker) }),
              target.count > marker.count else { return nil }
        let name = String(decoding: target[(at + marker.count)...], as: UTF8.self)
        // Debian's posix/ and right/ trees hold the same zones.
        if name.hasPrefix("posix/") { return String(name.dropFirst(6)) }
        return name
    }
}
