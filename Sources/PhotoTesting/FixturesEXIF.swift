/// A GPS block for `ExifFixture`: signed decimal degrees in, degrees/minutes/seconds and
/// reference letters out.
public struct GPSFixture: Sendable, Hashable {
    /// Signed degrees (south negative); `nil` writes no GPSLatitude.
    public var latitude: Double?
    /// Signed degrees (west negative); `nil` writes no GPSLongitude.
    public var longitude: Double?
    /// Metres (below sea level negative, written with GPSAltitudeRef 1).
    public var altitude: Double?
    /// Overrides the reference letters (`"N"`, `"S"`, ...); an empty string writes none.
    public var latitudeRef: String?
    /// Overrides the longitude reference letter; an empty string writes none.
    public var longitudeRef: String?
    /// GPSDateStamp, `YYYY:MM:DD` (UTC).
    public var dateStamp: String?
    /// GPSTimeStamp hours, minutes, seconds (UTC).
    public var timeStamp: (Double, Double, Double)?
    /// Write coordinates and altitude as SRATIONAL (some writers do), signs in the values.
    public var signedRationals: Bool

    /// A GPS block.
    public init(latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, latitudeRef: String? = nil,
                longitudeRef: String? = nil, dateStamp: String? = nil, timeStamp: (Double, Double, Double)? = nil,
                signedRationals: Bool = false) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.latitudeRef = latitudeRef
        self.longitudeRef = longitudeRef
        self.dateStamp = dateStamp
        self.timeStamp = timeStamp
        self.signedRationals = signedRationals
    }

    /// Equal when they write the same fields.
    public static func == (a: GPSFixture, b: GPSFixture) -> Bool { a.fields() == b.fields() }
    /// Hashes the written fields.
    public func hash(into h: inout Hasher) { h.combine(fields()) }

    /// The GPS IFD's fields.
    public func fields() -> [TIFFFixture.Field] {
        var f: [TIFFFixture.Field] = [TIFFFixture.Field(0x0000, .byte([2, 3, 0, 0]))]
        func dms(_ v: Double) -> TIFFValue {
            let a = abs(v)
            let d = a.rounded(.towardZero)
            let m = ((a - d) * 60).rounded(.towardZero)
            let s = ((a - d) * 60 - m) * 60
            if signedRationals {
                let sign: Int32 = v < 0 ? -1 : 1
                return .srational([sign * Int32(d), 1, sign * Int32(m), 1, sign * Int32((s * 10000).rounded()), 10000])
            }
            return .rational([UInt32(d), 1, UInt32(m), 1, UInt32((s * 10000).rounded()), 10000])
        }
        if let lat = latitude {
            let ref = latitudeRef ?? (lat < 0 ? "S" : "N")
            if !ref.isEmpty { f.append(.init(0x0001, .ascii(ref))) }
            f.append(.init(0x0002, dms(lat)))
        } else if let ref = latitudeRef, !ref.isEmpty {
            f.append(.init(0x0001, .ascii(ref)))
        }
        if let lon = longitude {
            let ref = longitudeRef ?? (lon < 0 ? "W" : "E")
            if !ref.isEmpty { f.append(.init(0x0003, .ascii(ref))) }
            f.append(.init(0x0004, dms(lon)))
        } else if let ref = longitudeRef, !ref.isEmpty {
            f.append(.init(0x0003, .ascii(ref)))
        }
        if let alt = altitude {
            f.append(.init(0x0005, .byte([alt < 0 && !signedRationals ? 1 : 0])))
            if signedRationals {
                f.append(.init(0x0006, .srational([Int32((alt * 100).rounded()), 100])))
            } else {
                f.append(.init(0x0006, .rational([UInt32((abs(alt) * 100).rounded()), 100])))
            }
        }
        if let (h, m, s) = timeStamp {
            f.append(.init(0x0007, .rational([UInt32(h), 1, UInt32(m), 1, UInt32((s * 1000).rounded()), 1000])))
        }
        if let d = dateStamp { f.append(.init(0x001D, .ascii(d))) }
        return f
    }
}

/// A camera-style EXIF block: IFD0 (Make, Model, Orientation, Software, DateTime), an
/// ExifIFD (dates with sub-seconds and offsets, LensModel, UserComment, a stale
/// PixelXDimension) and an optional GPS IFD, in either byte order.
///
///     let exif = ExifFixture(make: "Canon", model: "EOS 80D", dateTimeOriginal: "2019:05:04 13:22:10",
///                            offsetTimeOriginal: "+02:00", gps: GPSFixture(latitude: 52.52, longitude: 13.405))
///     let jpeg = JPEGFixture(width: 640, height: 480, exif: exif).bytes()
public struct ExifFixture: Sendable, Hashable {
    /// The block's byte order.
    public var byteOrder: FixtureByteOrder
    /// IFD0 Make (0x010F).
    public var make: String?
    /// IFD0 Model (0x0110).
    public var model: String?
    /// ExifIFD LensModel (0xA434).
    public var lensModel: String?
    /// IFD0 Software (0x0131).
    public var software: String?
    /// Written as a SHORT, any value (out-of-range values test validation).
    public var orientation: Int?
    /// ExifIFD DateTimeOriginal (0x9003), `YYYY:MM:DD HH:MM:SS`.
    public var dateTimeOriginal: String?
    /// ExifIFD SubSecTimeOriginal (0x9291), digits.
    public var subSecTimeOriginal: String?
    /// ExifIFD OffsetTimeOriginal (0x9011), `+HH:MM`.
    public var offsetTimeOriginal: String?
    /// ExifIFD DateTimeDigitized (0x9004).
    public var dateTimeDigitized: String?
    /// ExifIFD SubSecTimeDigitized (0x9292).
    public var subSecTimeDigitized: String?
    /// ExifIFD OffsetTimeDigitized (0x9012).
    public var offsetTimeDigitized: String?
    /// IFD0 DateTime (the "modified" date).
    public var dateTime: String?
    /// ExifIFD SubSecTime (0x9290), for IFD0 DateTime.
    public var subSecTime: String?
    /// ExifIFD OffsetTime (0x9010), for IFD0 DateTime.
    public var offsetTime: String?
    /// Written with the `ASCII\0\0\0` character code.
    public var userComment: String?
    /// ExifIFD PixelXDimension/PixelYDimension: a size editors leave stale, which readers must ignore.
    public var pixelDimensions: (UInt32, UInt32)?
    /// A GPS IFD, when set.
    public var gps: GPSFixture?
    /// More IFD0 and ExifIFD fields, verbatim.
    public var extraIFD0: [TIFFFixture.Field]
    /// More ExifIFD fields, verbatim.
    public var extraExif: [TIFFFixture.Field]

    /// An EXIF block; every field is optional.
    public init(byteOrder: FixtureByteOrder = .little, make: String? = nil, model: String? = nil, lensModel: String? = nil,
                software: String? = nil, orientation: Int? = nil, dateTimeOriginal: String? = nil,
                subSecTimeOriginal: String? = nil, offsetTimeOriginal: String? = nil, dateTimeDigitized: String? = nil,
                subSecTimeDigitized: String? = nil, offsetTimeDigitized: String? = nil, dateTime: String? = nil,
                subSecTime: String? = nil, offsetTime: String? = nil, userComment: String? = nil,
                pixelDimensions: (UInt32, UInt32)? = nil, gps: GPSFixture? = nil,
                extraIFD0: [TIFFFixture.Field] = [], extraExif: [TIFFFixture.Field] = []) {
        self.byteOrder = byteOrder
        self.make = make
        self.model = model
        self.lensModel = lensModel
        self.software = software
        self.orientation = orientation
        self.dateTimeOriginal = dateTimeOriginal
        self.subSecTimeOriginal = subSecTimeOriginal
        self.offsetTimeOriginal = offsetTimeOriginal
        self.dateTimeDigitized = dateTimeDigitized
        self.subSecTimeDigitized = subSecTimeDigitized
        self.offsetTimeDigitized = offsetTimeDigitized
        self.dateTime = dateTime
        self.subSecTime = subSecTime
        self.offsetTime = offsetTime
        self.userComment = userComment
        self.pixelDimensions = pixelDimensions
        self.gps = gps
        self.extraIFD0 = extraIFD0
        self.extraExif = extraExif
    }

    /// Equal when they describe the same structure.
    public static func == (a: ExifFixture, b: ExifFixture) -> Bool { a.tiff == b.tiff }
    /// Hashes the described structure.
    public func hash(into h: inout Hasher) { h.combine(tiff) }

    /// The block as a TIFF structure description (for further editing).
    public var tiff: TIFFFixture {
        var ifd0: [TIFFFixture.Field] = []
        if let v = make { ifd0.append(.init(0x010F, .ascii(v))) }
        if let v = model { ifd0.append(.init(0x0110, .ascii(v))) }
        if let v = orientation { ifd0.append(.init(0x0112, .short([UInt16(truncatingIfNeeded: v)]))) }
        ifd0.append(.init(0x011A, .rational([72, 1])))
        if let v = software { ifd0.append(.init(0x0131, .ascii(v))) }
        if let v = dateTime { ifd0.append(.init(0x0132, .ascii(v))) }
        ifd0 += extraIFD0
        var exif: [TIFFFixture.Field] = [.init(0x9000, .undefined(Array("0232".utf8)))]
        if let v = dateTimeOriginal { exif.append(.init(0x9003, .ascii(v))) }
        if let v = dateTimeDigitized { exif.append(.init(0x9004, .ascii(v))) }
        if let v = offsetTime { exif.append(.init(0x9010, .ascii(v))) }
        if let v = offsetTimeOriginal { exif.append(.init(0x9011, .ascii(v))) }
        if let v = offsetTimeDigitized { exif.append(.init(0x9012, .ascii(v))) }
        if let v = userComment { exif.append(.init(0x9286, .undefined(Array("ASCII\0\0\0".utf8) + Array(v.utf8)))) }
        if let v = subSecTime { exif.append(.init(0x9290, .ascii(v))) }
        if let v = subSecTimeOriginal { exif.append(.init(0x9291, .ascii(v))) }
        if let v = subSecTimeDigitized { exif.append(.init(0x9292, .ascii(v))) }
        if let (x, y) = pixelDimensions { exif += [.init(0xA002, .long([x])), .init(0xA003, .long([y]))] }
        if let v = lensModel { exif.append(.init(0xA434, .ascii(v))) }
        exif += extraExif
        return TIFFFixture(byteOrder: byteOrder, ifd0: ifd0, exif: exif, gps: gps?.fields())
    }

    /// The TIFF structure (what PNG `eXIf` and TIFF files hold).
    public func bytes() -> [UInt8] { tiff.bytes() }

    /// `Exif\0\0` followed by the TIFF structure (what a JPEG APP1 segment and WebP hold).
    public func app1Payload() -> [UInt8] { Array("Exif".utf8) + [0, 0] + bytes() }
}
