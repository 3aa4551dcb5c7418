import Foundation
import PhotoModel

/// Videos made by `ffmpeg` (Debian's, installed by `scripts/install-deps --tests`) for the
/// tests, and `ffmpeg`'s own reading of them to compare with.
public enum VideoFixtures {
    /// Where a tool is on `$PATH`, nil when it is not installed.
    static func tool(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    public static let ffmpeg: String? = tool("ffmpeg")
    public static let ffprobe: String? = tool("ffprobe")

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `tool` with `arguments`; its standard output, or `Failure` when it exits non-zero.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(description: "\((tool as NSString).lastPathComponent) \(arguments.joined(separator: " ")) exited \(p.terminationStatus)")
        }
        return data
    }

    /// Runs ffmpeg quietly with `arguments`.
    @discardableResult
    public static func ffmpeg(_ arguments: [String]) throws -> Data {
        guard let ffmpeg else { throw Failure(description: "ffmpeg is not installed") }
        return try run(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y"] + arguments)
    }

    /// Makes `path`: `seconds` of a test pattern (`pattern`, a lavfi source: `testsrc` numbers
    /// each frame, `testsrc2` moves) encoded with `video`, and a tone when `audio` names its
    /// codec.
    @discardableResult
    public static func make(_ path: PathBytes, video: [String], size: String = "320x240", rate: Int = 30,
                            seconds: Double = 1.5, audio: String? = nil, pattern: String = "testsrc",
                            extra: [String] = []) throws -> PathBytes {
        var args = ["-f", "lavfi", "-i", "\(pattern)=size=\(size):rate=\(rate)"]
        if audio != nil { args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] }
        args += ["-t", String(seconds)] + video
        if let audio { args += ["-c:a", audio] } else { args += ["-an"] }
        try ffmpeg(args + extra + [path.string])
        return path
    }

    /// Writes a display matrix into the first `tkhd` box (16.16 fixed point, as QuickTime and
    /// phones write it: 90° clockwise is {0, 1, -1, 0}); `mirrored` flips it left to right
    /// first (a front camera's mirror image).
    public static func setMatrix(_ bytes: inout [UInt8], degrees: Int, mirrored: Bool = false) throws {
        let tkhd = Array("tkhd".utf8)
        guard let at = (4..<(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == tkhd }), bytes[at + 4] == 0 else {
            throw Failure(description: "no version 0 tkhd box")
        }
        var (a, b, c, d): (Int32, Int32, Int32, Int32) = switch degrees {
        case 90: (0, 0x10000, -0x10000, 0)
        case 180: (-0x10000, 0, 0, -0x10000)
        case 270: (0, -0x10000, 0x10000, 0)
        default: (0x10000, 0, 0, 0x10000)
        }
        if mirrored { (a, b) = (-a, -b) }
        // After the type: version+flags 4, creation 4, modification 4, track id 4, reserved 4,
        // duration 4, reserved 8, layer 2, group 2, volume 2, reserved 2.
        let matrix = at + 4 + 40
        for (i, v) in [a, b, 0, c, d, 0, 0, 0, 0x4000_0000].enumerated() {
            let u = UInt32(bitPattern: v)
            for k in 0..<4 { bytes[matrix + 4 * i + k] = UInt8(truncatingIfNeeded: u >> (24 - 8 * k)) }
        }
    }

    /// ffmpeg's own frame of `path` at `seconds` (its accurate seek: the first frame at or after
    /// that time), turned by the display matrix as `ffmpeg` autorotates, scaled to
    /// `width`×`height` by area averaging: RGB bytes. `fromStart` decodes from the first frame
    /// instead of seeking (a transport stream's seek may land where no keyframe follows).
    public static func frame(_ path: PathBytes, at seconds: Double, width: Int, height: Int, fromStart: Bool = false) throws -> [UInt8] {
        let scale = "scale=\(width):\(height):flags=area"
        let args = fromStart
            ? ["-i", path.string, "-vf", "select=gte(t\\,\(String(format: "%.6f", seconds - 0.0005))),\(scale)"]
            : ["-ss", String(format: "%.6f", seconds), "-i", path.string, "-vf", scale]
        let data = try ffmpeg(args + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        return [UInt8](data)
    }
}
