import PhotoModel
import PhotoSystem

/// The daemon's `PlaceLookup`: GeoNames through libgeonames (read the first time an asset has
/// coordinates, ~20 ms and ~1.5 MB), and the system's time-zone database (tzdata) for the zones
/// its places name. Nothing leaves the machine.
public final class OfflinePlaces: PlaceLookup {
    private let gazetteer: @Sendable () -> Gazetteer
    /// Zones by name, each file read once.
    private let zones = Locked<[String: TZifZone?]>([:])

    /// GeoNames' cities; a test passes its own table.
    public init(gazetteer: (@Sendable () -> Gazetteer)? = nil) {
        self.gazetteer = gazetteer ?? { Self.geonames }
    }

    private static let geonames = Gazetteer.geonames()

    public func place(latitude: Double, longitude: Double) -> Place? {
        gazetteer().place(latitude: latitude, longitude: longitude)
    }

    /// The zone's offset at a wall-clock time there: the offset in force at the instant that
    /// wall time names under the offset in force at the same digits read as UTC (right except
    /// in the hour a clock skips or repeats, where one of the two offsets is as good as the other).
    public func offset(timeZone: String, at local: LocalDateTime) -> UTCOffset? {
        let zone = zones.withLock { cache -> TZifZone? in
            if let known = cache[timeZone] { return known }
            let z = SystemZones.zone(named: timeZone)
            cache[timeZone] = z
            return z
        }
        guard let zone else { return nil }
        let asUTC = local.unixSeconds(offsetSeconds: 0)
        func offset(_ t: Int64) -> Int { zone.offsetSeconds(atUnixSeconds: t) }
        return UTCOffset(seconds: offset(asUTC - Int64(offset(asUTC))))
    }
}
