import PhotoModel

/// IPTC-IIM (the IPTC Information Interchange Model) as Photoshop stores it in a JPEG: an
/// APP13 segment `Photoshop 3.0\0` holding image resource blocks (`8BIM`, a 2-byte id, a
/// Pascal name padded to an even length, a 4-byte size, the data padded to even), of which
/// 0x0404 is the IPTC-NAA record: datasets `1C record number size data`. photod reads the
/// capture date from it: 2:55 DateCreated (`CCYYMMDD`) and 2:60 TimeCreated (`HHMMSS±HHMM`).
/// Bounded: every length is checked against what holds it, and the walks stop after
/// `Limits.maxItems` blocks or datasets.
/// What photod takes from an IPTC-IIM record.
struct IPTCFields: Sendable, Hashable {
    var date: Timestamp?
    var place: Place?
}

enum IPTC {
    static let photoshopSignature = Array("Photoshop 3.0\0".utf8)
    static let resourceSignature = Array("8BIM".utf8)
    /// The image resource holding the IPTC-NAA record.
    static let iptcResource = 0x0404

    /// What an APP13 payload (the bytes after the segment's length) says, or nil when it is not
    /// a Photoshop block or holds no IPTC record.
    static func fields(app13 payload: ByteView) -> IPTCFields? {
        guard payload.matches(photoshopSignature), let record = iptcRecord(payload.slice(from: photoshopSignature.count))
        else { return nil }
        return fields(datasets: record)
    }

    /// The data of resource 0x0404 in a list of image resource blocks.
    static func iptcRecord(_ blocks: ByteView) -> ByteView? {
        var record: ByteView?
        forEachResource(blocks) { id, data in
            guard id == iptcResource else { return true }
            record = data
            return false
        }
        return record
    }

    /// Calls `body` with the id and data of each `8BIM` image resource block (a JPEG's APP13,
    /// a Photoshop document's image resources section) until it returns false; stops at the
    /// first block whose lengths run past the list.
    static func forEachResource(_ blocks: ByteView, _ body: (Int, ByteView) -> Bool) {
        var i = 0
        var items = 0
        while items < Limits.maxItems, blocks.has(i, 4 + 2 + 2 + 4) {
            items += 1
            // Other signatures (`PHUT`, `AgHg`, ...) are walked over; only 8BIM's count.
            let isPhotoshop = blocks.matches(resourceSignature, at: i)
            let id = blocks.be16(i + 4)
            let nameLength = Int(blocks[i + 6])
            let nameField = (1 + nameLength + 1) & ~1  // the length byte and the name, padded to even
            let sizeAt = i + 6 + nameField
            guard blocks.has(sizeAt, 4) else { return }
            let size = Int(blocks.be32(sizeAt))
            let dataAt = sizeAt + 4
            guard blocks.has(dataAt, size) else { return }
            if isPhotoshop, !body(id, blocks.slice(dataAt, size)) { return }
            i = dataAt + ((size + 1) & ~1)
        }
    }

    /// The datasets photod reads: DateCreated (2:55) with TimeCreated (2:60) when present
    /// (midnight without one; the offset when the time gives one), and the location: City
    /// (2:90), Sub-location (2:92), Province/State (2:95), Country code (2:100), Country name
    /// (2:101), in UTF-8 when the record says so (1:90 `ESC % G`) or is valid UTF-8, else
    /// Latin-1, as older writers stored them.
    static func fields(datasets v: ByteView) -> IPTCFields {
        var date: [UInt8]?
        var time: [UInt8]?
        var location: [UInt8: [UInt8]] = [:]
        var utf8Declared = false
        var i = 0
        var items = 0
        while items < Limits.maxItems, v.has(i, 5), v[i] == 0x1C {
            items += 1
            let record = v[i + 1], number = v[i + 2]
            var size = v.be16(i + 3)
            var dataAt = i + 5
            if size & 0x8000 != 0 {
                // An extended dataset: the low bits count the bytes of the real length.
                let n = size & 0x7FFF
                guard n <= 4, v.has(dataAt, n) else { break }
                size = 0
                for k in 0..<n { size = size << 8 | Int(v[dataAt + k]) }
                dataAt += n
            }
            guard v.has(dataAt, size) else { break }
            switch (record, number) {
            case (1, 90): utf8Declared = v.array(dataAt, min(size, 8)) == [0x1B, 0x25, 0x47]
            case (2, 55) where date == nil: date = v.array(dataAt, min(size, 32))
            case (2, 60) where time == nil: time = v.array(dataAt, min(size, 32))
            case (2, 90), (2, 92), (2, 95), (2, 100), (2, 101):
                if location[number] == nil { location[number] = v.array(dataAt, min(size, 256)) }
            default: break
            }
            i = dataAt + size
        }
        var fields = IPTCFields()
        if let date { fields.date = timestamp(date: date, time: time) }
        func text(_ number: UInt8) -> String? { location[number].flatMap { TextDecoding.text($0, utf8: utf8Declared) } }
        let place = Place.inFile(city: text(90), subLocation: text(92), region: text(95), country: text(101), code: text(100))
        if !place.isEmpty { fields.place = place }
        return fields
    }

    /// `CCYYMMDD` and `HHMMSS±HHMM` (the offset optional, as some writers leave it out; the
    /// `HH:MM:SS±HH:MM` spelling of a few tools accepted too).
    static func timestamp(date: [UInt8], time: [UInt8]?) -> Timestamp? {
        let d = date.filter(Digits.isDigit)
        guard d.count == 8, let y = Digits.value(d, 0, 4), let mo = Digits.value(d, 4, 2), let day = Digits.value(d, 6, 2)
        else { return nil }
        guard let time else {
            return LocalDateTime(year: y, month: mo, day: day).map { Timestamp(local: $0) }
        }
        let t = time.filter { $0 != UInt8(ascii: ":") && $0 != 0 && $0 != 0x20 }
        guard let h = Digits.value(t, 0, 2), let mi = Digits.value(t, 2, 2), let s = Digits.value(t, 4, 2),
              let local = LocalDateTime(year: y, month: mo, day: day, hour: h, minute: mi, second: s)
        else {
            // A broken time leaves the date.
            return LocalDateTime(year: y, month: mo, day: day).map { Timestamp(local: $0) }
        }
        let offset = t.count > 6 ? UTCOffset(parsing: t[6...]) : nil
        return Timestamp(local: local, offset: offset)
    }
}
