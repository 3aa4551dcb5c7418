import PhotoModel
import PhotoSystem

/// `ZoneRules` from the system's time-zone database (an IANA name, or the system's zone).
public struct SystemZone: ZoneRules {
    let zone: TZifZone

    public init(_ zone: TZifZone) { self.zone = zone }

    /// Parses `--timezone`: an IANA name (`Europe/Berlin`), `UTC`, or a fixed `+HH:MM`;
    /// `nil` for the system's zone.
    public static func named(_ name: String?) -> (any ZoneRules)? {
        guard let name else { return SystemZone(SystemZones.current()) }
        if let offset = UTCOffset(parsing: name) { return FixedZone(seconds: offset.seconds) }
        if name == "UTC" || name == "GMT" { return FixedZone.utc }
        return SystemZones.zone(named: name).map(SystemZone.init)
    }

    /// The zone's identifier, for `library.status`.
    public var identifier: String { zone.identifier }

    public func offsetSeconds(atUnixSeconds t: Int64) -> Int { zone.offsetSeconds(atUnixSeconds: t) }
}
