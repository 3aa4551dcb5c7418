/// MPEG program streams: MPEG-1 system streams (the `.mpg` of the 2000s' digital cameras) and
/// MPEG-2 program streams (DVD `.vob`, the `.mod` of JVC's and Panasonic's camcorders).
///
/// From the head and the tail: the first and the latest video time stamp, so the duration;
/// codecs, size and frame rate are libavformat's (`VideoProbe`).
enum MPEGPS {
    static func parse(_ input: inout Input, _ meta: inout MediaMetadata) throws(MetadataError) {
        let head = try input.view(at: 0, upTo: MPEGTime.reach)
        let start = walk(head, from: 0)
        guard let first = start.video.first else {
            if start.sawAudio {
                throw MetadataError(.notMedia, "content is an MPEG program stream of audio only, not an image or video", detectedKind: "audio")
            }
            meta.warnings.append("program stream holds no video time stamp in its first \(head.count) bytes")
            return
        }
        let from = max(0, input.size - Int64(MPEGTime.reach))
        let tail = from == 0 ? head : try input.view(at: from, upTo: MPEGTime.reach)
        // Packs found again in the tail (it starts mid-packet): at the first pack header.
        let pack = tail.find([0, 0, 1, 0xBA]) ?? tail.count
        meta.duration = MPEGTime.duration(first: first, end: MPEGTime.latest(walk(tail, from: pack).video))
    }

    /// The time stamps of the video packets (stream ids 0xE0–0xEF) from `i`, in stored order,
    /// packet by packet (by each one's length, so that nothing inside a payload is taken for a
    /// header); and whether an audio packet (0xC0–0xDF, 0xBD) came by.
    static func walk(_ v: ByteView, from i: Int) -> (video: [Int64], sawAudio: Bool) {
        var video: [Int64] = []
        var sawAudio = false
        var i = i
        while i + 6 <= v.count, v[i] == 0, v[i + 1] == 0, v[i + 2] == 1 {
            let id = v[i + 3]
            switch id {
            case 0xBA:  // a pack header: MPEG-2's 14 bytes and its stuffing, or MPEG-1's 12
                i += v[i + 4] >> 6 == 1 ? 14 + Int(v[i + 13] & 7) : 12
            case 0xB9:  // the program's end
                i += 4
            case 0xBB...0xFF:
                if (0xE0...0xEF).contains(id), let pts = timeStamp(v, packet: i) { video.append(pts) }
                if (0xC0...0xDF).contains(id) || id == 0xBD { sawAudio = true }
                i += 6 + v.be16(i + 4)
            default:
                return (video, sawAudio)  // not a system start code: the structure ends here
            }
        }
        return (video, sawAudio)
    }

    /// A PES packet's presentation time stamp: MPEG-2's header (flags, then the stamp), or
    /// MPEG-1's (stuffing, a buffer size, then the stamp).
    static func timeStamp(_ v: ByteView, packet i: Int) -> Int64? {
        if v[i + 6] >> 6 == 2 {
            return v[i + 7] & 0x80 != 0 && v.has(i + 9, 5) ? MPEGTime.timeStamp(v, at: i + 9) : nil
        }
        var p = i + 6
        while v[p] == 0xFF, p < i + 6 + 16 { p += 1 }
        if v[p] >> 6 == 1 { p += 2 }
        return (v[p] >> 4 == 2 || v[p] >> 4 == 3) && v.has(p, 5) ? MPEGTime.timeStamp(v, at: p) : nil
    }
}
