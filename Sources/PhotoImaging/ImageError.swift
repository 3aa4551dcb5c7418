/// Why an image could not be rendered. Every decoder failure maps to one of these; none is a
/// crash, and none is raised after allocating for a size the file only claims.
public enum ImageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A format the renderer does not decode: what the content is (`"MNG image"`,
    /// `"animated WebP"`, `"text"`, ...); `"video"` when a video is given to `render` (its
    /// poster is `renderPoster`).
    case unsupported(String)
    /// The image's header claims more pixels than the renderer's `pixelLimit`.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// The file is bigger than the renderer's `fileSizeLimit` (it is read whole).
    case fileTooLarge(bytes: Int64, limit: Int64)
    /// The file is damaged: truncated, a bad header, a decoder error. `reason` says which.
    case corrupt(String)
    /// The file is a valid image of a format the renderer decodes, of a kind no decoder here
    /// renders (a JPEG whose height is given by a DNL segment, a lossless or 12-bit JPEG, an
    /// animated WebP, a HEIF of a codec libheif lacks). `reason` says what. It is still an
    /// asset, with what its headers give.
    case undecodable(String)
    /// The file cannot be opened or read (`errno` from the failing call).
    case unreadable(errno: Int32, String)
    /// The request itself is invalid (an empty target size).
    case invalidRequest(String)
    /// The decode ran past its CPU or wall-time limit (a video's poster: 5 s of CPU).
    case timedOut(String)

    /// A short stable code for logs and the wire: `unsupported`, `tooLarge`, `corrupt`,
    /// `undecodable`, `unreadable`, `invalidRequest`, `timeout` (`fileTooLarge` is `tooLarge`).
    public var code: String {
        switch self {
        case .unsupported: return "unsupported"
        case .tooLarge, .fileTooLarge: return "tooLarge"
        case .corrupt: return "corrupt"
        case .undecodable: return "undecodable"
        case .unreadable: return "unreadable"
        case .invalidRequest: return "invalidRequest"
        case .timedOut: return "timeout"
        }
    }

    /// A sentence for people.
    public var description: String {
        switch self {
        case .unsupported(let what):
            return what == "video" ? "unsupported: a video's image is its poster frame (renderPoster)"
                : "unsupported: cannot decode \(what)"
        case .tooLarge(let w, let h, let limit):
            return "tooLarge: the image is \(w)x\(h) (\(w * h) pixels), over the limit of \(limit) pixels"
        case .fileTooLarge(let bytes, let limit):
            return "tooLarge: the file is \(bytes) bytes, over the limit of \(limit) bytes"
        case .corrupt(let reason): return "corrupt: \(reason)"
        case .undecodable(let reason):
            // A video's reason says it all ("video: the file has no video stream").
            return reason.hasPrefix("video: ") ? "undecodable: \(reason)" : "undecodable: a valid image no decoder here renders: \(reason)"
        case .unreadable(let errno, let message): return "unreadable: \(message) (errno \(errno))"
        case .invalidRequest(let message): return "invalidRequest: \(message)"
        case .timedOut(let message): return "timeout: \(message)"
        }
    }
}
