#if canImport(Glibc)
import Glibc
#endif
import PhotoModel

/// Where photod keeps its database and socket when not told, shared by `photod` and
/// `photoctl` so that both find the same socket. Precedence: the command-line flag, then
/// `PHOTOD_SOCKET` / `PHOTOD_DATABASE`, then systemd's directories (`$RUNTIME_DIRECTORY`,
/// `$STATE_DIRECTORY`), then the XDG base directories, then `/run/photod` and
/// `/var/lib/photod` for root or `/tmp/photod-$UID` and `~/.local/state/photod` otherwise.
public struct DefaultPaths: Sendable {
    public var environment: [String: String]
    public var uid: UInt32

    public init(environment: [String: String], uid: UInt32 = getuid()) {
        self.environment = environment
        self.uid = uid
    }

    /// The file name of the socket in its directory.
    public static let socketName = "photod.sock"
    /// The file name of the database in its directory.
    public static let databaseName = "photod.db"
    /// The system service's socket (what `photoctl` tries when the user's default is absent).
    public static let systemSocket = PathBytes("/run/photod/photod.sock")

    private func env(_ key: String) -> String? {
        guard let v = environment[key], !v.isEmpty else { return nil }
        // systemd may pass several directories separated by ':'; the first is ours.
        return String(v.split(separator: ":").first ?? Substring(v))
    }

    /// The socket path when neither a flag nor `PHOTOD_SOCKET` says otherwise.
    public var socket: PathBytes {
        if let explicit = environment["PHOTOD_SOCKET"], !explicit.isEmpty { return PathBytes(explicit) }
        if let dir = env("RUNTIME_DIRECTORY") { return PathBytes(dir).appending(Self.socketName) }
        if let dir = env("XDG_RUNTIME_DIR") { return PathBytes(dir).appending(Self.socketName) }
        if uid == 0 { return Self.systemSocket }
        return PathBytes("/tmp/photod-\(uid)").appending(Self.socketName)
    }

    /// The database path when neither a flag nor `PHOTOD_DATABASE` says otherwise.
    public var database: PathBytes {
        if let explicit = environment["PHOTOD_DATABASE"], !explicit.isEmpty { return PathBytes(explicit) }
        if let dir = env("STATE_DIRECTORY") { return PathBytes(dir).appending(Self.databaseName) }
        if let dir = env("XDG_STATE_HOME") { return PathBytes(dir).appending("photod").appending(Self.databaseName) }
        if uid == 0 { return PathBytes("/var/lib/photod").appending(Self.databaseName) }
        if let home = env("HOME") {
            return PathBytes(home).appending(".local/state/photod").appending(Self.databaseName)
        }
        return PathBytes("/tmp/photod-\(uid)").appending(Self.databaseName)
    }

    /// The image cache's directory when neither a flag nor `PHOTOD_CACHE` says otherwise:
    /// systemd's `CacheDirectory=`, the user's cache directory, or `/var/cache/photod` for root.
    public var cache: PathBytes {
        if let explicit = environment["PHOTOD_CACHE"], !explicit.isEmpty { return PathBytes(explicit) }
        if let dir = env("CACHE_DIRECTORY") { return PathBytes(dir) }
        if let dir = env("XDG_CACHE_HOME") { return PathBytes(dir).appending("photod") }
        if uid == 0 { return PathBytes("/var/cache/photod") }
        if let home = env("HOME") { return PathBytes(home).appending(".cache/photod") }
        return PathBytes("/tmp/photod-\(uid)").appending("cache")
    }

    /// The sockets `photoctl` tries, in order: the default, then the system service's — unless
    /// `PHOTOD_SOCKET` names one, which is then the only one (never someone else's daemon).
    public var clientSockets: [PathBytes] {
        if let explicit = environment["PHOTOD_SOCKET"], !explicit.isEmpty { return [PathBytes(explicit)] }
        return socket == Self.systemSocket ? [socket] : [socket, Self.systemSocket]
    }

    /// Makes a path absolute against the working directory, without resolving links.
    public static func absolute(_ path: String) -> PathBytes {
        if path.hasPrefix("/") { return normalized(PathBytes(path)) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return PathBytes(path) }
        let cwd = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return normalized(PathBytes(cwd).appending(path))
    }

    /// Removes `.` components, duplicate and trailing slashes, and resolves `..` textually.
    public static func normalized(_ path: PathBytes) -> PathBytes {
        var parts: [[UInt8]] = []
        for c in path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if c.elementsEqual([0x2E]) { continue }
            if c.elementsEqual([0x2E, 0x2E]) { _ = parts.popLast(); continue }
            parts.append(Array(c))
        }
        return PathBytes([UInt8(ascii: "/")] + parts.joined(separator: [UInt8(ascii: "/")]))
    }

    /// The path the kernel would reach, as far as it can be told now: `canonical` when it
    /// exists; else the longest part that exists made canonical, each symbolic link after it
    /// followed (a link to a disk not mounted yet), and the rest taken lexically. Absolute
    /// paths only (a relative one is taken from `/`).
    public static func resolved(_ path: PathBytes) -> PathBytes {
        var p = normalized(path)
        for _ in 0..<40 {
            if let real = canonical(p) { return real }
            // The deepest ancestor that exists, and what follows it.
            var base = p
            var rest: [[UInt8]] = []
            while base != PathBytes("/"), canonical(base) == nil {
                rest.insert(base.lastComponent, at: 0)
                base = base.parent
            }
            let top = canonical(base) ?? base
            guard let first = rest.first else { return p }
            let next = top.appending(first)
            guard let target = readLink(next) else {
                return normalized(PathBytes(top.bytes + rest.flatMap { [UInt8(ascii: "/")] + $0 }))
            }
            let joined = target.first == UInt8(ascii: "/") ? target : top.appending(target).bytes
            p = normalized(PathBytes(joined + rest.dropFirst().flatMap { [UInt8(ascii: "/")] + $0 }))
        }
        return p
    }

    /// The target of a symbolic link, or nil when `path` is not one.
    static func readLink(_ path: PathBytes) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = path.withCString { p in buffer.withUnsafeMutableBytes { readlink(p, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) } }
        return n > 0 ? Array(buffer[..<n]) : nil
    }

    /// `realpath(3)`: the canonical absolute path (links resolved), or `nil` when it does not exist.
    public static func canonical(_ path: PathBytes) -> PathBytes? {
        path.withCString { p -> PathBytes? in
            guard let r = realpath(p, nil) else { return nil }
            defer { free(r) }
            return PathBytes(Array(UnsafeBufferPointer(start: UnsafeRawPointer(r).assumingMemoryBound(to: UInt8.self),
                                                       count: strlen(r))))
        }
    }
}
