/// Everything a file offers about when it was captured, before the rules pick one.
/// The metadata reader fills what it finds; `CaptureDate.resolve` applies MISSION.md's order.
public struct DateCandidates: Sendable, Hashable {
    /// EXIF DateTimeOriginal with SubSecTimeOriginal and OffsetTimeOriginal.
    public var exifOriginal: Timestamp?
    /// EXIF DateTimeDigitized with SubSecTimeDigitized and OffsetTimeDigitized.
    public var exifDigitized: Timestamp?
    /// IFD0 DateTime with SubSecTime and OffsetTime.
    public var exifModified: Timestamp?
    /// GPSDateStamp + GPSTimeStamp: a UTC wall time, used to derive a missing offset.
    public var gpsUTC: LocalDateTime?
    /// An XMP capture date (`exif:DateTimeOriginal`, `photoshop:DateCreated`, `xmp:CreateDate`).
    public var xmp: Timestamp?
    /// IPTC-IIM DateCreated + TimeCreated (with its `±HHMM` when given).
    public var iptc: Timestamp?
    /// A container's local time with its offset: Apple's `com.apple.quicktime.creationdate`,
    /// AVCHD's recording time (`MDPM`).
    public var quickTimeLocal: Timestamp?
    /// The `mvhd` creation time in Unix seconds (UTC by the QuickTime and ISO specifications),
    /// or a container's UTC date (Matroska `DateUTC`, ASF creation date).
    public var containerUTC: Int64?
    /// A container's local date without a zone (AVI `IDIT`, RIFF `ICRD`).
    public var containerLocal: LocalDateTime?

    public init(exifOriginal: Timestamp? = nil, exifDigitized: Timestamp? = nil, exifModified: Timestamp? = nil,
                gpsUTC: LocalDateTime? = nil, xmp: Timestamp? = nil, iptc: Timestamp? = nil, quickTimeLocal: Timestamp? = nil,
                containerUTC: Int64? = nil, containerLocal: LocalDateTime? = nil) {
        self.exifOriginal = exifOriginal
        self.exifDigitized = exifDigitized
        self.exifModified = exifModified
        self.gpsUTC = gpsUTC
        self.xmp = xmp
        self.iptc = iptc
        self.quickTimeLocal = quickTimeLocal
        self.containerUTC = containerUTC
        self.containerLocal = containerLocal
    }
}

/// An asset's capture time: the wall time on the capture clock, its offset when known, and
/// the rule that produced it. Every asset has one.
public struct CaptureDate: Sendable, Hashable, CustomStringConvertible {
    public var local: LocalDateTime
    public var offset: UTCOffset?
    public var source: DateSource

    public init(local: LocalDateTime, offset: UTCOffset?, source: DateSource) {
        self.local = local
        self.offset = offset
        self.source = source
    }

    public var description: String { "\(local)\(offset?.description ?? "") (\(source.rawValue))" }

    /// Applies the capture-time rules, first that exists:
    /// DateTimeOriginal, DateTimeDigitized, an XMP capture date, IPTC DateCreated + TimeCreated,
    /// DateTime (the time of the last edit, so after every capture date), QuickTime (Apple's
    /// local creationdate, else the container's UTC time shown in `zone`), a date in the file
    /// name, and finally the file's mtime shown in `zone`.
    ///
    /// An EXIF time without an offset takes one from the GPS time stamp when that is
    /// plausible (the difference, rounded to 15 minutes, within ±14 h). An XMP time without an
    /// offset takes the IPTC time's when that names the same moment (to the second) with one
    /// (IPTC TimeCreated is `HHMMSS±HHMM`; XMP writers often drop the zone).
    public static func resolve(_ c: DateCandidates, fileName: [UInt8], mtimeNanoseconds: Int64,
                               zone: any ZoneRules) -> CaptureDate {
        func exif(_ t: Timestamp, _ source: DateSource) -> CaptureDate {
            let offset = t.offset ?? c.gpsUTC.flatMap { derivedOffset(local: t.local, gpsUTC: $0) }
            return CaptureDate(local: t.local, offset: offset, source: source)
        }
        if let t = c.exifOriginal { return exif(t, .exifOriginal) }
        if let t = c.exifDigitized { return exif(t, .exifDigitized) }
        if let t = c.xmp { return CaptureDate(local: t.local, offset: t.offset ?? iptcOffset(sameMomentAs: t.local, c.iptc), source: .xmp) }
        if let t = c.iptc { return CaptureDate(local: t.local, offset: t.offset, source: .iptc) }
        if let t = c.exifModified { return exif(t, .exifModified) }
        if let t = c.quickTimeLocal { return CaptureDate(local: t.local, offset: t.offset, source: .quicktime) }
        if let utc = c.containerUTC, let d = inZone(unixSeconds: utc, millisecond: nil, zone: zone) {
            return CaptureDate(local: d.local, offset: d.offset, source: .quicktime)
        }
        if let local = c.containerLocal { return CaptureDate(local: local, offset: nil, source: .quicktime) }
        if let local = FileNameDate.parse(fileName) { return CaptureDate(local: local, offset: nil, source: .fileName) }
        let seconds = mtimeNanoseconds >= 0 ? mtimeNanoseconds / 1_000_000_000 : (mtimeNanoseconds - 999_999_999) / 1_000_000_000
        let ms = Int((mtimeNanoseconds - seconds * 1_000_000_000) / 1_000_000)
        if let d = inZone(unixSeconds: seconds, millisecond: ms, zone: zone) {
            return CaptureDate(local: d.local, offset: d.offset, source: .fileModified)
        }
        // An mtime outside the plausible years (a clock at 0, a corrupt inode): the epoch.
        return CaptureDate(local: LocalDateTime(year: 1970, month: 1, day: 1)!, offset: UTCOffset(seconds: 0),
                           source: .fileModified)
    }

    /// The offset of the IPTC date and time when it is the same wall time as `local`, to the second.
    static func iptcOffset(sameMomentAs local: LocalDateTime, _ iptc: Timestamp?) -> UTCOffset? {
        guard let iptc, let offset = iptc.offset else { return nil }
        let a = local, b = iptc.local
        guard a.year == b.year, a.month == b.month, a.day == b.day, a.hour == b.hour, a.minute == b.minute, a.second == b.second
        else { return nil }
        return offset
    }

    /// The offset between an EXIF local time and the GPS UTC time of the same shot, rounded to
    /// 15 minutes; `nil` when the difference is not a real zone offset.
    public static func derivedOffset(local: LocalDateTime, gpsUTC: LocalDateTime) -> UTCOffset? {
        let diff = local.secondsSinceEpochOnThisClock - gpsUTC.secondsSinceEpochOnThisClock
        let quarter: Int64 = 15 * 60
        let rounded = (diff >= 0 ? diff + quarter / 2 : diff - quarter / 2) / quarter * quarter
        // A GPS fix taken long before the shot is not an offset: insist the rounding error is small.
        guard abs(rounded) <= 14 * 3600, abs(diff - rounded) <= 5 * 60 else { return nil }
        return UTCOffset(seconds: Int(rounded))
    }

    static func inZone(unixSeconds: Int64, millisecond: Int?, zone: any ZoneRules) -> Timestamp? {
        let off = zone.offsetSeconds(atUnixSeconds: unixSeconds)
        guard let local = LocalDateTime(unixSeconds: unixSeconds, offsetSeconds: off, millisecond: millisecond)
        else { return nil }
        return Timestamp(local: local, offset: UTCOffset(seconds: off))
    }
}
