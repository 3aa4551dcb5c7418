import PhotoModel

/// MPEG transport streams: AVCHD camcorder clips (`.mts`, `.m2ts`: 192-byte packets, each a
/// 4-byte time code then the 188-byte packet) and recordings or segments (`.ts`: 188 bytes).
///
/// From the head: the program's streams (PAT, then PMT), the first video PES's time stamp
/// and, in an H.264 stream, AVCHD's recording date and camera make (the `MDPM` user data of
/// its first SEI, as exiftool's H264 module reads it); from the tail: the last video time
/// stamp, so the duration. Codecs, size and frame rate are libavformat's (`VideoProbe`).
enum MPEGTS {
    /// Where packets start: their size and the sync byte's place in each, when `h` starts with
    /// at least three packets in a row (sync byte 0x47 at the same place in each).
    static func layout(_ h: ByteView) -> (size: Int, sync: Int)? {
        for (size, sync) in [(188, 0), (192, 4)] where h.count >= sync + 2 * size + 1 {
            if h[sync] == 0x47, h[sync + size] == 0x47, h[sync + 2 * size] == 0x47 { return (size, sync) }
        }
        return nil
    }

    /// PMT stream types of video: MPEG-1/2, MPEG-4 part 2, H.264, H.264 MVC, HEVC, VC-1.
    static let videoTypes: Set<UInt8> = [0x01, 0x02, 0x10, 0x1B, 0x20, 0x24, 0xEA]
    /// ... and of audio (MPEG audio, AAC, LPCM, AC-3, DTS, E-AC-3, TrueHD).
    static let audioTypes: Set<UInt8> = [0x03, 0x04, 0x0F, 0x11, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0xA1, 0xA2]

    static func parse(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        let head = try input.view(at: 0, upTo: MPEGTime.reach)
        guard let (size, sync) = layout(head) else { return }
        var walk = Walk()
        walk.read(head, from: sync, size: size)
        if walk.streamsKnown, walk.videoPID == nil {
            guard !walk.sawAudio else {
                throw MetadataError(.notMedia, "content is an MPEG transport stream of audio only, not an image or video", detectedKind: "audio")
            }
            meta.warnings.append("transport stream names no video stream")
            return
        }
        if let first = walk.firstPTS, let video = walk.videoPID {
            // From the first frame's time stamp to the last one's, plus a frame (the shortest
            // step between the last frames' stamps). Stamps count 90 kHz ticks in 33 bits and
            // may wrap once within a clip.
            meta.duration = MPEGTime.duration(first: first, end: try tailTimes(&input, pid: video, size: size))
        }
        if let mdpm = walk.mdpm { apply(mdpm, to: &meta) }
    }

    /// The packets of the head, in order: PAT, PMT, and the first video PES.
    struct Walk {
        var pmtPID: Int?
        var videoPID: Int?
        var videoType: UInt8?
        var sawAudio = false
        var streamsKnown = false
        var firstPTS: Int64?
        /// The first video PES's payload so far, and whether it is complete.
        var pes: [UInt8] = []
        var pesComplete = false
        var mdpm: [UInt8: [UInt8]]?

        mutating func read(_ h: ByteView, from sync: Int, size: Int) {
            MPEGTS.forEachPacket(h, from: sync, size: size) { pid, start, payload in
                packet(pid: pid, start: start, payload)
                return !pesComplete
            }
            if videoType == 0x1B, !pes.isEmpty { mdpm = MPEGTS.mdpm(in: pes) }
        }

        private mutating func packet(pid: Int, start: Bool, _ payload: ByteView) {
            if pid == 0, start, pmtPID == nil {
                pmtPID = MPEGTS.programMap(payload)
            } else if let pmt = pmtPID, pid == pmt, start, !streamsKnown {
                streamsKnown = true
                for (type, stream) in MPEGTS.streams(payload) {
                    if videoPID == nil, videoTypes.contains(type) { videoPID = stream; videoType = type }
                    if audioTypes.contains(type) { sawAudio = true }
                }
            } else if let video = videoPID, pid == video {
                if start {
                    if firstPTS != nil { pesComplete = true; return }
                    guard let (pts, body) = MPEGTS.pesStart(payload) else { return }
                    firstPTS = pts
                    pes = body.array()
                } else if firstPTS != nil, pes.count < 64 * 1024 {
                    pes += payload.array()
                }
            }
        }
    }

    /// Calls `body` with each packet's PID, whether a unit (a section, a PES packet) starts in
    /// it, and its payload, from the packet at `i` while packets keep their sync byte and `body`
    /// returns true.
    static func forEachPacket(_ v: ByteView, from i: Int, size: Int, _ body: (Int, Bool, ByteView) -> Bool) {
        var i = i
        while i + 188 <= v.count, v[i] == 0x47 {
            let control = v[i + 3] >> 4 & 3
            var p = i + 4
            if control & 2 != 0 { p += 1 + Int(v[i + 4]) }  // the adaptation field
            if control & 1 != 0, p < i + 188,
               !body((Int(v[i + 1]) & 0x1F) << 8 | Int(v[i + 2]), v[i + 1] & 0x40 != 0, v.slice(p, i + 188 - p)) {
                return
            }
            i += size
        }
    }

    /// The PID of the first program's map in a PAT section.
    static func programMap(_ payload: ByteView) -> Int? {
        let s = payload.slice(from: 1 + Int(payload[0]))  // after the pointer field
        guard s[0] == 0x00 else { return nil }
        let end = min(3 + ((Int(s[1]) & 0x0F) << 8 | Int(s[2])) - 4, s.count)  // less the CRC
        var e = 8
        while e + 4 <= end {
            let program = s.be16(e), pid = (Int(s[e + 2]) & 0x1F) << 8 | Int(s[e + 3])
            if program != 0 { return pid }
            e += 4
        }
        return nil
    }

    /// The (stream type, PID) pairs of a PMT section.
    static func streams(_ payload: ByteView) -> [(UInt8, Int)] {
        let s = payload.slice(from: 1 + Int(payload[0]))
        guard s[0] == 0x02 else { return [] }
        let end = min(3 + ((Int(s[1]) & 0x0F) << 8 | Int(s[2])) - 4, s.count)
        var e = 12 + ((Int(s[10]) & 0x0F) << 8 | Int(s[11]))  // past the program's descriptors
        var list: [(UInt8, Int)] = []
        while e + 5 <= end, list.count < 32 {
            list.append((s[e], (Int(s[e + 1]) & 0x1F) << 8 | Int(s[e + 2])))
            e += 5 + ((Int(s[e + 3]) & 0x0F) << 8 | Int(s[e + 4]))
        }
        return list
    }

    /// A PES packet's start: its presentation time stamp and the payload after its header.
    static func pesStart(_ p: ByteView) -> (Int64, ByteView)? {
        guard p.count >= 14, p[0] == 0, p[1] == 0, p[2] == 1, p[7] & 0x80 != 0 else { return nil }
        return (MPEGTime.timeStamp(p, at: 9), p.slice(from: 9 + Int(p[8])))
    }

    /// The latest video time stamp in the file's last `MPEGTime.reach` bytes (frames are stored in
    /// decoding order: the last stored is not always the last shown) and the shortest step
    /// between them; packets are found again from the end (a clip cut short ends mid-packet).
    static func tailTimes(_ input: inout Input, pid: Int, size: Int) throws(MetadataError) -> (last: Int64, frame: Int64?)? {
        let from = max(0, input.size - Int64(MPEGTime.reach))
        let tail = try input.view(at: from, upTo: MPEGTime.reach)
        // The first place where three packets in a row line up.
        guard let first = (0..<min(size, tail.count)).first(where: {
            tail[$0] == 0x47 && tail[$0 + size] == 0x47 && tail[$0 + 2 * size] == 0x47
        }) else { return nil }
        var stamps: [Int64] = []
        forEachPacket(tail, from: first, size: size) { packetPID, start, payload in
            if start, packetPID == pid, let (pts, _) = pesStart(payload) { stamps.append(pts) }
            return true
        }
        return MPEGTime.latest(stamps)
    }

    /// AVCHD's Modified DV Pack Meta: the entries of the unregistered user data with UUID
    /// 17ee8c60-f84d-11d9-8cd6-0800200c9a66 in an H.264 stream's SEI, by tag (4 bytes each).
    static func mdpm(in stream: [UInt8]) -> [UInt8: [UInt8]]? {
        let marker: [UInt8] = [0x17, 0xEE, 0x8C, 0x60, 0xF8, 0x4D, 0x11, 0xD9, 0x8C, 0xD6, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66,
                               0x4D, 0x44, 0x50, 0x4D]
        guard let at = ByteView(stream).find(marker) else { return nil }
        // The NAL unit's bytes with its emulation prevention (00 00 03) undone, up to 1 + 255 × 5.
        var data: [UInt8] = []
        var zeros = 0
        for b in stream[(at + marker.count)...] {
            if zeros >= 2, b == 3 { zeros = 0; continue }
            zeros = b == 0 ? zeros + 1 : 0
            data.append(b)
            if data.count >= 1 + 255 * 5 { break }
        }
        guard let count = data.first else { return nil }
        var entries: [UInt8: [UInt8]] = [:]
        var last: UInt8 = 0
        for k in 0..<Int(count) {
            let e = 1 + 5 * k
            guard e + 5 <= data.count, data[e] > last || k == 0 else { break }  // in tag order, as written
            last = data[e]
            entries[data[e]] = Array(data[(e + 1)..<(e + 5)])
        }
        return entries.isEmpty ? nil : entries
    }

    /// The makers AVCHD's MDPM names by code (tag 0xE0's first two bytes).
    static let makers: [Int: String] = [0x0103: "Panasonic", 0x0108: "Sony", 0x1011: "Canon", 0x1104: "JVC"]

    /// The recording time (tags 0x18 and 0x19: the zone byte, then year, month, day, hour,
    /// minute, second in BCD) and the make.
    static func apply(_ mdpm: [UInt8: [UInt8]], to meta: inout MediaMetadata) {
        if let a = mdpm[0x18], let b = mdpm[0x19], a.count >= 4, b.count >= 4 {
            let zone = a[0]
            let d = [a[1], a[2], a[3], b[0], b[1], b[2], b[3]].compactMap { byte -> Int? in
                let hi = Int(byte >> 4), lo = Int(byte & 0x0F)
                return hi < 10 && lo < 10 ? hi * 10 + lo : nil
            }
            if d.count == 7, let local = LocalDateTime(year: d[0] * 100 + d[1], month: d[2], day: d[3], hour: d[4], minute: d[5], second: d[6]) {
                // The zone byte: 0x20 west of Greenwich, 0x1E the camera's zone in hours, 0x01 a
                // half hour more, 0x40 daylight saving time on (the clock an hour ahead of the
                // zone); 0x80 set means no zone was recorded.
                var offset: UTCOffset?
                if zone & 0x80 == 0 {
                    var minutes = Int(zone >> 1 & 0x0F) * 60 + (zone & 0x01 != 0 ? 30 : 0)
                    if zone & 0x20 != 0 { minutes = -minutes }
                    if zone & 0x40 != 0 { minutes += 60 }
                    offset = UTCOffset(seconds: minutes * 60)
                }
                meta.dates.quickTimeLocal = Timestamp(local: local, offset: offset)
            }
        }
        if let m = mdpm[0xE0], m.count >= 2 { meta.make = makers[Int(m[0]) << 8 | Int(m[1])] ?? meta.make }
    }
}
